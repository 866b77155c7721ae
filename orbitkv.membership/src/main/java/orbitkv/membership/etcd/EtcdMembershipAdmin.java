package orbitkv.membership.etcd;

import static orbitkv.membership.etcd.Keys.bytes;
import static orbitkv.membership.etcd.Keys.text;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.FormatRecord;
import orbitkv.membership.MembershipAdmin;
import orbitkv.membership.NodeId;
import orbitkv.membership.etcd.EtcdCalls.EtcdCallFailed;

/**
 * The jetcd implementation of {@link MembershipAdmin}. Every read of the namespace is one consistent cut
 * (paged at the first page's revision); every write that matters is a compare-guarded transaction, so a
 * concurrent change turns into a {@code CONFLICT} refusal instead of a lost update.
 */
public final class EtcdMembershipAdmin implements MembershipAdmin {
    /** Keys per page when the namespace is read. */
    static final int PAGE_KEYS = 1000;
    /** Operations per retire/prune transaction (etcd's default --max-txn-ops is 128). */
    static final int TXN_KEYS = 32;

    private final Client client;
    private final Keys keys;
    private final String clusterName;
    private final long timeoutMs;
    /** Each endpoint's TLS handshake refusal, when every https:// endpoint refused it (issue 33); else null. */
    private final String tlsRefusal;

    private EtcdMembershipAdmin(Client client, String clusterName, long timeoutMs, String tlsRefusal) {
        this.client = client;
        this.tlsRefusal = tlsRefusal;
        this.clusterName = clusterName;
        this.keys = new Keys("/orbitkv/v2/" + clusterName + "/");
        this.timeoutMs = timeoutMs;
    }

    public static MembershipAdmin connect(EtcdEndpoints etcd, String clusterName, long timeoutMs) {
        new ClusterIdentity(clusterName, new UUID(0, 0)); // validates the name (names "cluster name")
        if (timeoutMs < 1 || timeoutMs > 600_000) {
            throw new IllegalArgumentException("etcd call timeout must be 1..600000 ms, got " + timeoutMs);
        }
        // issue 33: a TLS misconfiguration is named at once (ETCD_UNAVAILABLE with the handshake cause), as the
        // Manager does before registering, instead of every call running out its deadline
        String tlsRefusal = etcd.tls().flatMap(tls -> EtcdTlsProbe.everyEndpointRefused(etcd, EtcdCalls.sslContext(tls),
                Math.min(EtcdTlsProbe.DEADLINE_MS, timeoutMs))).map(r -> r + "; check --etcd-ca-file, --etcd-cert-file and "
                + "--etcd-key-file against the etcd server's TLS settings").orElse(null);
        return new EtcdMembershipAdmin(EtcdCalls.client(etcd, timeoutMs), clusterName, timeoutMs, tlsRefusal);
    }

    /** One consistent read of every key under the prefix, classified. */
    record Snapshot(long revision, KeyEntry format, List<KeyEntry> members, List<KeyEntry> epochs,
                    KeyEntry floor, List<KeyEntry> others, List<KeyEntry> all) {}

    private Snapshot read() throws EtcdCallFailed {
        List<KeyEntry> all = new ArrayList<>();
        long revision = 0;
        ByteSequence from = bytes(keys.prefix());
        ByteSequence end = Keys.rangeEnd(keys.prefix());
        while (true) {
            GetOption.Builder opt = GetOption.builder().withRange(end).withLimit(PAGE_KEYS)
                    .withSortField(GetOption.SortTarget.KEY).withSortOrder(GetOption.SortOrder.ASCEND);
            if (revision > 0) {
                opt.withRevision(revision);
            }
            GetResponse page = EtcdCalls.await(client.getKVClient().get(from, opt.build()), timeoutMs);
            if (revision == 0) {
                revision = page.getHeader().getRevision();
            }
            for (KeyValue kv : page.getKvs()) {
                all.add(new KeyEntry(text(kv.getKey()), text(kv.getValue()), kv.getModRevision(), kv.getLease()));
            }
            if (all.size() > MAX_NAMESPACE_KEYS) {
                throw new EtcdCallFailed("more than " + MAX_NAMESPACE_KEYS + " keys under " + keys.prefix(),
                        io.grpc.Status.Code.RESOURCE_EXHAUSTED, null);
            }
            if (!page.isMore() || page.getKvs().isEmpty()) {
                break;
            }
            byte[] last = page.getKvs().getLast().getKey().getBytes();
            from = ByteSequence.from(java.util.Arrays.copyOf(last, last.length + 1));
        }
        KeyEntry format = null;
        KeyEntry floor = null;
        List<KeyEntry> members = new ArrayList<>();
        List<KeyEntry> epochs = new ArrayList<>();
        List<KeyEntry> others = new ArrayList<>();
        for (KeyEntry e : all) {
            switch (keys.kindOf(e.key())) {
                case FORMAT -> format = e;
                case EPOCH_FLOOR -> floor = e;
                case EPOCH -> epochs.add(e);
                case MEMBER -> members.add(e);
                case OTHER -> others.add(e);
            }
        }
        return new Snapshot(revision, format, members, epochs, floor, others, all);
    }

    /** Keys under the prefix attached to a lease that etcd still reports alive. */
    private List<String> liveLeaseKeys(Snapshot s) throws EtcdCallFailed {
        Map<Long, Boolean> alive = new HashMap<>();
        List<String> live = new ArrayList<>();
        for (KeyEntry e : s.all()) {
            if (e.lease() == 0) {
                continue;
            }
            Boolean a = alive.get(e.lease());
            if (a == null) {
                a = EtcdCalls.await(client.getLeaseClient().timeToLive(e.lease(), LeaseOption.DEFAULT), timeoutMs).getTTL() > 0;
                alive.put(e.lease(), a);
            }
            if (a) {
                live.add(e.key());
            }
        }
        return live;
    }

    @Override
    public FormatResult format() {
        if (tlsRefusal != null) {
            return new Refusal(Reason.ETCD_UNAVAILABLE, tlsRefusal);
        }
        FormatRecord record = FormatRecord.random();
        try {
            TxnResponse r = EtcdCalls.await(client.getKVClient().txn()
                    .If(new Cmp(bytes(keys.format()), Cmp.Op.EQUAL, CmpTarget.version(0)))
                    .Then(Op.put(bytes(keys.format()), bytes(record.encode()), PutOption.DEFAULT))
                    .Else(Op.get(bytes(keys.format()), GetOption.DEFAULT))
                    .commit(), timeoutMs);
            if (!r.isSucceeded()) {
                List<KeyValue> kvs = r.getGetResponses().getFirst().getKvs();
                String existing = kvs.isEmpty() ? "?" : text(kvs.getFirst().getValue());
                return new Refusal(Reason.ALREADY_FORMATTED, keys.format() + " already holds '"
                        + existing.replace("\n", "\\n") + "'; format never overwrites a cluster");
            }
            return new Formatted(new ClusterIdentity(clusterName, record.clusterUuid()), keys.format(),
                    record.encode(), r.getHeader().getRevision());
        } catch (EtcdCallFailed e) {
            return unavailable(e);
        }
    }

    @Override
    public ShowResult show() {
        if (tlsRefusal != null) {
            return new Refusal(Reason.ETCD_UNAVAILABLE, tlsRefusal);
        }
        try {
            Snapshot s = read();
            List<String> live = liveLeaseKeys(s);
            boolean current = s.format() != null && FormatRecord.parseCanonicalOrNull(s.format().value()) != null;
            return new NamespaceReport(keys.prefix(), s.revision(), Optional.ofNullable(s.format()), current,
                    s.members(), s.floor() == null ? s.epochs() : concat(s.epochs(), s.floor()), s.others(), live,
                    plan(s, live));
        } catch (EtcdCallFailed e) {
            return unavailable(e);
        }
    }

    private CutoverPlan plan(Snapshot s, List<String> live) {
        if (s.format() == null) {
            return new CutoverPlan(Optional.empty(), Optional.empty(), List.of(), List.of("unformatted: run `orbitkv admin format`"));
        }
        if (FormatRecord.parseCanonicalOrNull(s.format().value()) != null) {
            return new CutoverPlan(Optional.of(s.format().value()), Optional.empty(), List.of(),
                    List.of("format is already " + ClusterIdentity.PROTOCOL));
        }
        List<String> blockers = new ArrayList<>();
        for (String k : live) {
            blockers.add("live lease on " + k);
        }
        return new CutoverPlan(Optional.of(s.format().value()), Optional.of(newFormatFor(s.format().value()).encode()),
                s.others().stream().map(KeyEntry::key).toList(), blockers);
    }

    private static FormatRecord newFormatFor(String oldValue) {
        UUID kept = FormatRecord.clusterUuidLineOrNull(oldValue);
        // Deterministic for the same old value, so `show` prints exactly what `cutover` writes.
        return new FormatRecord(kept != null ? kept : UUID.nameUUIDFromBytes(oldValue.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    @Override
    public BackupResult backup(Path out) {
        if (tlsRefusal != null) {
            return new Refusal(Reason.ETCD_UNAVAILABLE, tlsRefusal);
        }
        try {
            Snapshot s = read();
            BackupFile.write(out, keys.prefix(), s.revision(), s.all());
            return new BackupWritten(out, s.all().size(), s.revision());
        } catch (EtcdCallFailed e) {
            return unavailable(e);
        } catch (IOException e) {
            return new Refusal(Reason.BAD_ARGUMENT, "cannot write backup " + out + ": " + e);
        }
    }

    @Override
    public CutoverResult cutover(Path backupPath) {
        if (tlsRefusal != null) {
            return new Refusal(Reason.ETCD_UNAVAILABLE, tlsRefusal);
        }
        try {
            Snapshot s = read();
            if (s.format() == null) {
                return new Refusal(Reason.UNFORMATTED, keys.format() + " does not exist");
            }
            if (FormatRecord.parseCanonicalOrNull(s.format().value()) != null) {
                return new Refusal(Reason.ALREADY_CURRENT, keys.format() + " already holds " + ClusterIdentity.PROTOCOL);
            }
            List<String> live = liveLeaseKeys(s);
            if (!live.isEmpty()) {
                return new Refusal(Reason.LIVE_REGISTRATIONS, "stop every Manager first; live leases on " + live);
            }
            BackupFile.Contents backup;
            Object checked = readBackup(backupPath);
            if (checked instanceof Refusal r) {
                return r;
            }
            backup = (BackupFile.Contents) checked;
            KeyEntry backedFormat = find(backup.keys(), keys.format());
            if (backedFormat == null || !backedFormat.value().equals(s.format().value())
                    || backedFormat.modRevision() != s.format().modRevision()) {
                return new Refusal(Reason.BACKUP_STALE, "backup " + backupPath
                        + " does not hold the current format record at mod revision " + s.format().modRevision());
            }
            String newValue = newFormatFor(s.format().value()).encode();
            TxnResponse cas = EtcdCalls.await(client.getKVClient().txn()
                    .If(new Cmp(bytes(keys.format()), Cmp.Op.EQUAL, CmpTarget.value(bytes(s.format().value()))),
                        new Cmp(bytes(keys.format()), Cmp.Op.EQUAL, CmpTarget.modRevision(s.format().modRevision())))
                    .Then(Op.put(bytes(keys.format()), bytes(newValue), PutOption.DEFAULT))
                    .commit(), timeoutMs);
            if (!cas.isSucceeded()) {
                return new Refusal(Reason.CONFLICT, keys.format() + " changed during cutover; nothing was written");
            }
            List<String> retired = new ArrayList<>();
            List<String> kept = new ArrayList<>();
            retire(s.others(), backup.keys(), retired, kept);
            return new CutOver(s.format().value(), newValue, retired, kept);
        } catch (EtcdCallFailed e) {
            return unavailable(e);
        }
    }

    /** Deletes old keys that the backup holds at their current mod revision; everything else is kept. */
    private void retire(List<KeyEntry> old, List<KeyEntry> backedUp, List<String> retired, List<String> kept)
            throws EtcdCallFailed {
        Map<String, Long> archived = new HashMap<>();
        for (KeyEntry e : backedUp) {
            archived.put(e.key(), e.modRevision());
        }
        List<KeyEntry> eligible = new ArrayList<>();
        for (KeyEntry e : old) {
            Long rev = archived.get(e.key());
            if (rev != null && rev == e.modRevision()) {
                eligible.add(e);
            } else {
                kept.add(e.key());
            }
        }
        for (int i = 0; i < eligible.size(); i += TXN_KEYS) {
            List<KeyEntry> chunk = eligible.subList(i, Math.min(eligible.size(), i + TXN_KEYS));
            if (deleteGuarded(chunk)) {
                chunk.forEach(e -> retired.add(e.key()));
            } else {
                for (KeyEntry e : chunk) { // someone changed a key of this chunk: decide key by key
                    (deleteGuarded(List.of(e)) ? retired : kept).add(e.key());
                }
            }
        }
    }

    private boolean deleteGuarded(List<KeyEntry> chunk) throws EtcdCallFailed {
        Cmp[] cmps = chunk.stream()
                .map(e -> new Cmp(bytes(e.key()), Cmp.Op.EQUAL, CmpTarget.modRevision(e.modRevision())))
                .toArray(Cmp[]::new);
        Op[] dels = chunk.stream().map(e -> (Op) Op.delete(bytes(e.key()), DeleteOption.DEFAULT)).toArray(Op[]::new);
        return EtcdCalls.await(client.getKVClient().txn().If(cmps).Then(dels).commit(), timeoutMs).isSucceeded();
    }

    @Override
    public RollbackResult rollback(Path backupPath) {
        if (tlsRefusal != null) {
            return new Refusal(Reason.ETCD_UNAVAILABLE, tlsRefusal);
        }
        try {
            Snapshot s = read();
            if (s.format() == null) {
                return new Refusal(Reason.UNFORMATTED, keys.format() + " does not exist");
            }
            if (FormatRecord.parseCanonicalOrNull(s.format().value()) == null) {
                return new Refusal(Reason.NOT_CURRENT, keys.format() + " does not hold " + ClusterIdentity.PROTOCOL
                        + "; nothing to roll back");
            }
            List<String> live = liveLeaseKeys(s);
            if (!live.isEmpty()) {
                return new Refusal(Reason.LIVE_REGISTRATIONS, "stop every Manager first; live leases on " + live);
            }
            Object checked = readBackup(backupPath);
            if (checked instanceof Refusal r) {
                return r;
            }
            KeyEntry old = find(((BackupFile.Contents) checked).keys(), keys.format());
            if (old == null || FormatRecord.parseCanonicalOrNull(old.value()) != null) {
                return new Refusal(Reason.BACKUP_INVALID, "backup " + backupPath + " holds no pre-cutover format record");
            }
            TxnResponse cas = EtcdCalls.await(client.getKVClient().txn()
                    .If(new Cmp(bytes(keys.format()), Cmp.Op.EQUAL, CmpTarget.value(bytes(s.format().value()))),
                        new Cmp(bytes(keys.format()), Cmp.Op.EQUAL, CmpTarget.modRevision(s.format().modRevision())))
                    .Then(Op.put(bytes(keys.format()), bytes(old.value()), PutOption.DEFAULT))
                    .commit(), timeoutMs);
            if (!cas.isSucceeded()) {
                return new Refusal(Reason.CONFLICT, keys.format() + " changed during rollback; nothing was written");
            }
            // Epoch keys are never written here: they only ever increase (MEM-5).
            return new RolledBack(old.value(), s.format().value(), s.floor() == null ? s.epochs() : concat(s.epochs(), s.floor()));
        } catch (EtcdCallFailed e) {
            return unavailable(e);
        }
    }

    @Override
    public PruneResult pruneEpochs(Duration inactiveFor) {
        if (tlsRefusal != null) {
            return new Refusal(Reason.ETCD_UNAVAILABLE, tlsRefusal);
        }
        if (inactiveFor == null || inactiveFor.isNegative() || inactiveFor.isZero()) {
            return new Refusal(Reason.BAD_ARGUMENT, "--inactive-for must be a positive duration, got " + inactiveFor);
        }
        try {
            Snapshot s = read();
            TreeSet<String> withMember = new TreeSet<>();
            for (KeyEntry m : s.members()) {
                withMember.add(m.key().substring(keys.membersPrefix().length()));
            }
            long cutoffUnixMs = System.currentTimeMillis() - inactiveFor.toMillis();
            List<KeyEntry> candidates = new ArrayList<>();
            List<String> kept = new ArrayList<>();
            for (KeyEntry e : s.epochs()) {
                String node = e.key().substring(keys.epochsPrefix().length());
                EpochRecord r;
                try {
                    r = EpochRecord.parse(e.value());
                } catch (IllegalArgumentException bad) {
                    kept.add(node + " (unreadable epoch record)");
                    continue;
                }
                if (r.issuedUnixMs() == EpochRecord.UNKNOWN_ISSUE_TIME) {
                    kept.add(node + " (issue time unknown: legacy epoch value)");
                } else if (withMember.contains(node) || r.issuedUnixMs() > cutoffUnixMs) {
                    kept.add(node);
                } else {
                    candidates.add(e);
                }
            }
            long floor = s.floor() == null ? 0 : EpochRecord.parse(s.floor().value()).epoch();
            long floorRev = s.floor() == null ? 0 : s.floor().modRevision();
            List<String> pruned = new ArrayList<>();
            for (int i = 0; i < candidates.size(); i += TXN_KEYS) {
                List<KeyEntry> chunk = candidates.subList(i, Math.min(candidates.size(), i + TXN_KEYS));
                long newFloor = floor;
                List<Cmp> cmps = new ArrayList<>();
                List<Op> ops = new ArrayList<>();
                cmps.add(new Cmp(bytes(keys.epochFloor()), Cmp.Op.EQUAL, CmpTarget.modRevision(floorRev)));
                for (KeyEntry e : chunk) {
                    String node = e.key().substring(keys.epochsPrefix().length());
                    newFloor = Math.max(newFloor, EpochRecord.parse(e.value()).epoch());
                    cmps.add(new Cmp(bytes(e.key()), Cmp.Op.EQUAL, CmpTarget.modRevision(e.modRevision())));
                    cmps.add(new Cmp(bytes(keys.member(node)), Cmp.Op.EQUAL, CmpTarget.version(0)));
                    ops.add(Op.delete(bytes(e.key()), DeleteOption.DEFAULT));
                }
                ops.add(0, Op.put(bytes(keys.epochFloor()),
                        bytes(new EpochRecord(newFloor, System.currentTimeMillis()).encode()), PutOption.DEFAULT));
                TxnResponse r = EtcdCalls.await(client.getKVClient().txn()
                        .If(cmps.toArray(Cmp[]::new)).Then(ops.toArray(Op[]::new)).commit(), timeoutMs);
                if (!r.isSucceeded()) {
                    chunk.forEach(e -> kept.add(e.key().substring(keys.epochsPrefix().length()) + " (changed concurrently)"));
                    break; // the floor's revision moved too: a rerun reads again
                }
                floor = newFloor;
                floorRev = r.getHeader().getRevision();
                chunk.forEach(e -> pruned.add(e.key().substring(keys.epochsPrefix().length())));
            }
            return new Pruned(pruned, floor, kept);
        } catch (EtcdCallFailed e) {
            return unavailable(e);
        }
    }

    private Object readBackup(Path backupPath) {
        if (backupPath == null || !Files.isRegularFile(backupPath)) {
            return new Refusal(Reason.BACKUP_MISSING, "backup file " + backupPath + " does not exist; run `orbitkv admin backup` first");
        }
        try {
            BackupFile.Contents c = BackupFile.read(backupPath);
            if (!c.prefix().equals(keys.prefix())) {
                return new Refusal(Reason.BACKUP_INVALID, "backup " + backupPath + " is of prefix " + c.prefix()
                        + ", not " + keys.prefix());
            }
            return c;
        } catch (IllegalArgumentException | IOException e) {
            return new Refusal(Reason.BACKUP_INVALID, e.getMessage());
        }
    }

    private static KeyEntry find(List<KeyEntry> entries, String key) {
        for (KeyEntry e : entries) {
            if (e.key().equals(key)) {
                return e;
            }
        }
        return null;
    }

    private static List<KeyEntry> concat(List<KeyEntry> a, KeyEntry b) {
        List<KeyEntry> out = new ArrayList<>(a);
        out.add(b);
        return out;
    }

    private static Refusal unavailable(EtcdCallFailed e) {
        Reason r = e.code() == io.grpc.Status.Code.RESOURCE_EXHAUSTED ? Reason.TOO_MANY_KEYS : Reason.ETCD_UNAVAILABLE;
        return new Refusal(r, e.getMessage());
    }

    /** Validates a node id the way registration does (for the CLI). */
    static NodeId nodeId(String s) {
        return new NodeId(s);
    }

    @Override
    public void close() {
        client.close();
    }
}
