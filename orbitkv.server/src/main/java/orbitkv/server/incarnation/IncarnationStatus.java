package orbitkv.server.incarnation;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;
import orbitkv.membership.Incarnation;

/**
 * What the incarnation's metadata answers, as domain records (issue 34 item 2): the fence of a sync, the await
 * answer, and {@code /cache/metadata/status} (DIAG-1) with its membership, inventory, owners, sessions and transfer
 * sections. The HTTP adapter serializes them with snake_case names; field names are a user-facing contract
 * (docs/api.md): additions only. The {@code JsonInclude} marks say which nulls a client sees.
 */
public final class IncarnationStatus {
    private IncarnationStatus() {}

    /** {@code {"node_id", "node_epoch", "incarnation"}}. */
    public record Owner(String nodeId, long nodeEpoch, String incarnation) {
        /** An incarnation as an owner. */
        public static Owner of(Incarnation i) {
            return new Owner(i.nodeId().value(), i.epoch().value(), i.toString());
        }
    }
    public record Fence(String protocol, String clusterUuid, long sourceNodeEpoch, String sourceIncarnation,
                 long inventorySequence) {}

    public record AwaitResponse(long appliedSequence, String viewId) {}

    public record Cluster(String name, String uuid) {}

    /**
     * {@code namespaces} is a list of strings or the string "all"; {@code pending} the scope generation bootstrapping
     * beside this one, or null; {@code changes} what became of the requested scope changes (IDX-6, issue 40).
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record ScopeView(String digest, long generation, Object namespaces, PendingScope pending, ScopeChanges changes) {
        /** A scope that has never changed (a standalone Manager, or the first generation). */
        public ScopeView(String digest, long generation, Object namespaces) {
            this(digest, generation, namespaces, null, new ScopeChanges(0, 0, 0, null));
        }
    }

    /** IDX-6: a scope generation bootstrapping beside the serving one until it swaps or is abandoned. */
    public record PendingScope(long generation, String digest, Object namespaces, long elapsedMs, long deadlineInMs) {}

    /**
     * IDX-6: scope changes swapped in, abandoned (timeout or fence: the serving generation stayed), refused because
     * one was pending ({@code SCOPE_CHANGE_PENDING}), and the last outcome ("swapped", "abandoned: ...") or null.
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record ScopeChanges(long swapped, long abandoned, long refusedPending, String lastOutcome) {}

    /**
     * The answer to {@code POST /cache/scope} (IDX-6): the generation that will serve {@code scope_digest};
     * {@code state} "bootstrapping" (a new generation beside the serving one) or "current" (already serving).
     */
    public record ScopeChange(long generation, String scopeDigest, String state) {}

    /**
     * {@code lease}: "healthy", "renewal-failing" (etcd unreachable or slow: degraded, still admitted until the
     * fence) or "fenced" ("standalone" without etcd); {@code refused_records}: member records never admitted
     * (issue 20 items 6, 7).
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record MembershipStatus(Long revision, boolean valid, int members, String lease, long failedRenewals,
                            RefusedRecords refusedRecords, @JsonInclude(JsonInclude.Include.NON_NULL) HealReport heal) {
        public MembershipStatus(Long revision, boolean valid, int members, String lease, long failedRenewals,
                         RefusedRecords refusedRecords) {
            this(revision, valid, members, lease, failedRenewals, refusedRecords, null);
        }

        public MembershipStatus withHeal(HealReport h) {
            return new MembershipStatus(revision, valid, members, lease, failedRenewals, refusedRecords, h);
        }
    }

    public record RefusedRecords(long unleased, long keyMismatch, long malformed) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Stamp(Long sequence, Long monoNs) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record InventoryStatus(long headSequence, Long oldestRetained, Long journalBytes, Long journalPeakBytes,
                           Stamp lastPublication) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record OwnerStatus(Owner owner, String state, String viewId, long watermark, long sourceHead, long receiptAgeMs,
                       long rows, long bytes, Stamp installed, String lastResetCause) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record StatusResponse(String protocol, Cluster cluster, Owner self, ScopeView scope, MembershipStatus membership,
                          String coverage, InventoryStatus inventory, List<OwnerStatus> owners, String nextPageToken,
                          SessionsStatus sessions, TransferStatus transfer) {
        public StatusResponse(String protocol, Cluster cluster, Owner self, ScopeView scope, MembershipStatus membership,
                       String coverage, InventoryStatus inventory, List<OwnerStatus> owners, String nextPageToken,
                       SessionsStatus sessions) {
            this(protocol, cluster, self, scope, membership, coverage, inventory, owners, nextPageToken, sessions, null);
        }
    }

    /**
     * Both transfer ends of this Manager (issue 13 item 6; docs/transfer.md): the source's grants, pins, refusals
     * and egress, the requester's READs per backend and route class, refusals, failures and windows. Map keys are
     * closed enum names in lowercase.
     */
    public record TransferStatus(TransferSourceView source, TransferRequesterView requester) {}

    public record TransferSourceView(String dataEndpoint, long grantsOutstanding, long pinsHeld, long pinnedBytes,
                              long prefetchPinnedBytes, long grantsIssued, Map<String, Long> grantsEnded,
                              Map<String, Long> refusals, Map<String, Long> dataRefusals,
                              Map<String, Long> readsServed, Map<String, Long> bytesServed,
                              long egressInFlightBytes, long egressInFlightBytesMax, long dataConnections,
                              Map<String, Long> sendsCut,
                              Map<String, Long> dataConnectionRefusals,
                              Map<String, Long> dataConnectionTimeouts,
                              Map<String, Long> dataReadPauses, long dataAcceptFailures) {}

    public record TransferRoute(String backend, String route, long reads, long bytes, long latencySumNanos) {}

    public record TransferRequesterView(String defaultBackend, List<TransferRoute> routes, long readsAdmitted,
                                 long readsTerminated, Map<String, Long> readRefusals,
                                 Map<String, Long> readFailures, long checksumFailures, long readsTimedOut,
                                 long readsCancelled, Map<String, Long> sharedMemoryFallbacks,
                                 long receiveInFlightBytes, long receiveInFlightBytesMax, long readsInFlight,
                                 long authorizeGranted, long authorizeNothingGranted,
                                 Map<String, Long> authorizeRefusals, Map<String, Long> authorizeFailures,
                                 long grantsTracked, long releasesConfirmed, long releasesNotConfirmed, long arenasMapped,
                                 long loadSummariesReceived, long loadSummariesRejected,
                                 long receiveCreditsHeldBytes, long receiveCreditsRefusals) {}

    /**
     * The InventorySessions of this Manager (DIAG-1, BND-3): the requester end's sessions (one per admitted
     * source, at most {@code sessions_per_requester_max}; admitted sources beyond the limit are listed in
     * {@code beyond_limit} and make {@code capacity_complete} false) and the source end's served sessions.
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record SessionsStatus(int admittedSources, int sessionsPerRequesterMax, boolean capacityComplete,
                          List<String> beyondLimit, List<RequesterSession> requester, List<ServedSession> served,
                          List<String> sourceSessionsRefusedMembers, long sourceSessionLimitEpisodes) {}

    public record RequesterSession(Owner source, String state, long connects, long installs, String lastErrorCause) {}

    public record ServedSession(Owner requester, String sessionId, String phase, long cursor, long lastFrame,
                         long outstandingBytes, long peakOutstandingBytes, long snapshotAttempts, long snapshotAborts) {}
}
