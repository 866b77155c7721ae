package orbitkv.membership;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import orbitkv.membership.etcd.EtcdMembershipAdmin;

/**
 * The offline tool behind {@code orbitkv admin} (DESIGN §3 and the design's <i>Cutover, rollback and
 * handoff</i>; MEM-1, MEM-3, MEM-5). Every operation returns a sealed result; an {@link Refusal} changed
 * nothing in etcd. Operations that change the format guard do so with an exact compare-and-swap of its
 * value and mod revision and never write epoch keys downwards.
 */
public interface MembershipAdmin extends AutoCloseable {
    /** At most this many keys under one cluster prefix are read, backed up or planned. */
    int MAX_NAMESPACE_KEYS = 1_000_000;

    /** Connects to etcd for the cluster named {@code clusterName} (validated like a node id). */
    static MembershipAdmin connect(EtcdEndpoints etcd, String clusterName, long etcdCallTimeoutMs) {
        return EtcdMembershipAdmin.connect(etcd, clusterName, etcdCallTimeoutMs);
    }

    /** Creates the canonical v4 format record with a new random cluster UUID; refuses if one exists. */
    FormatResult format();

    /** Dry run: the format, members, epochs, every other key, and the exact keys a cutover would touch. */
    ShowResult show();

    /** Writes every key under the prefix, read at one revision, to {@code out} (atomically replaced). */
    BackupResult backup(Path out);

    /**
     * Old format to v4: refuses while any lease under the prefix is live or unless {@code backup} is a
     * backup of the current old format; CAS of the format value (epochs kept); then retires the old
     * block/publisher keys that the backup holds at their current mod revision.
     */
    CutoverResult cutover(Path backup);

    /** v4 back to the format held by {@code backup} (exact CAS); refuses while leases are live; epochs untouched. */
    RollbackResult rollback(Path backup);

    /**
     * The inactive-node policy (MEM-5): deletes {@code epochs/<node>} of nodes with no member record whose
     * last epoch was issued more than {@code inactiveFor} ago, after raising the epoch floor
     * {@code epochs/@floor} to at least their epochs in the same transaction, so that a pruned node that
     * returns registers above every epoch it ever had: epochs never decrease.
     */
    PruneResult pruneEpochs(Duration inactiveFor);

    @Override
    void close();

    // ------------------------------------------------------------------ results

    /** One key under the prefix as etcd holds it. */
    record KeyEntry(String key, String value, long modRevision, long lease) {
        public KeyEntry {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
        }
    }

    /** What a cutover would do from the state shown. */
    record CutoverPlan(Optional<String> formatFrom, Optional<String> formatTo, List<String> keysToRetire,
                       List<String> blockers) {
        public CutoverPlan {
            keysToRetire = List.copyOf(keysToRetire);
            blockers = List.copyOf(blockers);
        }
    }

    /** A refusal: nothing was changed. */
    record Refusal(Reason reason, String detail)
            implements FormatResult, ShowResult, BackupResult, CutoverResult, RollbackResult, PruneResult {
        public Refusal {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /** Why an admin operation refused. */
    enum Reason {
        ALREADY_FORMATTED, UNFORMATTED, ALREADY_CURRENT, NOT_CURRENT, LIVE_REGISTRATIONS, BACKUP_MISSING,
        BACKUP_INVALID, BACKUP_STALE, CONFLICT, TOO_MANY_KEYS, BAD_ARGUMENT, ETCD_UNAVAILABLE
    }

    sealed interface FormatResult permits Formatted, Refusal {}

    /** The format record was created. */
    record Formatted(ClusterIdentity cluster, String formatKey, String value, long revision) implements FormatResult {}

    sealed interface ShowResult permits NamespaceReport, Refusal {}

    /** Everything under the prefix at one revision, classified, with the cutover plan. */
    record NamespaceReport(String prefix, long revision, Optional<KeyEntry> format, boolean formatIsCurrent,
                           List<KeyEntry> members, List<KeyEntry> epochs, List<KeyEntry> otherKeys,
                           List<String> liveLeaseKeys, CutoverPlan plan) implements ShowResult {
        public NamespaceReport {
            members = List.copyOf(members);
            epochs = List.copyOf(epochs);
            otherKeys = List.copyOf(otherKeys);
            liveLeaseKeys = List.copyOf(liveLeaseKeys);
        }
    }

    sealed interface BackupResult permits BackupWritten, Refusal {}

    /** The backup file was written. */
    record BackupWritten(Path file, int keys, long revision) implements BackupResult {}

    sealed interface CutoverResult permits CutOver, Refusal {}

    /** The format guard now holds {@code newFormat}; {@code retired} keys were deleted, {@code kept} were not. */
    record CutOver(String oldFormat, String newFormat, List<String> retired, List<String> kept) implements CutoverResult {
        public CutOver {
            retired = List.copyOf(retired);
            kept = List.copyOf(kept);
        }
    }

    sealed interface RollbackResult permits RolledBack, Refusal {}

    /** The format guard holds the backup's old format again; epochs were not written. */
    record RolledBack(String restoredFormat, String replacedFormat, List<KeyEntry> epochs) implements RollbackResult {
        public RolledBack {
            epochs = List.copyOf(epochs);
        }
    }

    sealed interface PruneResult permits Pruned, Refusal {}

    /** These nodes' epoch keys were deleted; the floor is now {@code floorEpoch}. */
    record Pruned(List<String> nodes, long floorEpoch, List<String> kept) implements PruneResult {
        public Pruned {
            nodes = List.copyOf(nodes);
            kept = List.copyOf(kept);
        }
    }
}
