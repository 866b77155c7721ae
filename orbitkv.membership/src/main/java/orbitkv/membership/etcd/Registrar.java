package orbitkv.membership.etcd;

import static orbitkv.membership.etcd.Keys.bytes;
import static orbitkv.membership.etcd.Keys.text;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.FormatRecord;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;
import orbitkv.membership.RetryBackoff;
import orbitkv.membership.etcd.EtcdCalls.EtcdCallFailed;

/**
 * One registration (DESIGN §3; MEM-1, MEM-2, MEM-3, MEM-5, MEM-8): read the format record, the node's
 * epoch key and the epoch floor in one consistent read; grant a fresh lease; then one transaction that
 * compares the format value <em>and</em> its mod revision, the epoch key's and the floor's mod revisions,
 * and writes the next epoch and the member record on the lease. A lost compare on the epoch means a
 * concurrent registration of the same node id won: refused as {@code Contended}, so exactly one of two
 * racers wins. An ambiguous transaction (deadline, UNAVAILABLE) is resolved by reading the member key:
 * our incarnation id there means it committed; otherwise the same compare-guarded transaction is retried,
 * which can never commit twice.
 */
final class Registrar {
    static final int MAX_ATTEMPTS = 5;

    /** What a successful claim established. */
    record Claim(ClusterIdentity cluster, Member member, long leaseId, long grantSentNanos,
                 long grantedTtlMs, long revision) {
        Incarnation incarnation() {
            return member.incarnation();
        }
    }

    /**
     * A heal of {@code fenced}: the member key may hold exactly that incarnation, or the record diagnosed as
     * tampered at mod revision {@code tamperedRevision} (0: none), and nothing written after the read.
     */
    record Healing(Incarnation fenced, long tamperedRevision) {}

    /** Either a claim or a refusal carrying the public result. */
    sealed interface Outcome permits Claimed, Refused {}

    record Claimed(Claim claim) implements Outcome {}

    record Refused(RegistrationResult result) implements Outcome {}

    private final Client client;
    private final KV kv;
    private final Registrant who;
    private final MembershipConfig config;
    private final LongSupplier clock;
    private final Keys keys;
    /** A heal: the fenced incarnation whose member record (and only that one) may be replaced; else empty. */
    private final Optional<Healing> healing;

    Registrar(Client client, Registrant who, MembershipConfig config, LongSupplier clock) {
        this(client, who, config, clock, Optional.empty());
    }

    /**
     * @param healing for a heal, the fenced incarnation: the transaction then also requires the member key to
     *     be absent or to hold exactly that incarnation at the revision read (issue 17 item 5), or the record
     *     that incarnation diagnosed as tampered, unchanged since (issue 33)
     */
    Registrar(Client client, Registrant who, MembershipConfig config, LongSupplier clock, Optional<Healing> healing) {
        this.healing = healing;
        this.client = client;
        this.kv = client.getKVClient();
        this.who = who;
        this.config = config;
        this.clock = clock;
        this.keys = new Keys(who.keyPrefix());
    }

    Outcome register() {
        RetryBackoff.Sequence backoff = config.retryBackoff().sequence();
        String lastError = "no attempt";
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            try {
                Outcome o = attempt();
                if (o != null) {
                    return o;
                }
                lastError = "format record changed during registration";
            } catch (EtcdCallFailed e) {
                lastError = e.getMessage();
            }
            sleep(backoff.nextDelayMs());
        }
        return new Refused(new RegistrationResult.Unavailable(
                "registration failed after " + MAX_ATTEMPTS + " attempts: " + lastError));
    }

    /** One attempt; null means "re-read and try again" (the format record moved underneath us). */
    private Outcome attempt() throws EtcdCallFailed {
        String node = who.nodeId().value();
        TxnResponse read = EtcdCalls.await(kv.txn()
                .Then(get(keys.format()), get(keys.epoch(node)), get(keys.epochFloor()), get(keys.member(node)))
                .commit(), config.etcdCallTimeoutMs());
        List<GetResponse> gets = read.getGetResponses();
        KeyValue format = first(gets.get(0));
        if (format == null) {
            return new Refused(new RegistrationResult.Unformatted(keys.format()));
        }
        String formatValue = text(format.getValue());
        FormatRecord record = FormatRecord.parseCanonicalOrNull(formatValue);
        if (record == null) {
            return new Refused(new RegistrationResult.FormatMismatch(keys.format(),
                    "protocol = " + ClusterIdentity.PROTOCOL + "\ncluster_uuid = <uuid>\n", formatValue));
        }
        Optional<java.util.UUID> expected = who.expectedClusterUuid();
        if (expected.isPresent() && !expected.get().equals(record.clusterUuid())) {
            return new Refused(new RegistrationResult.ClusterMismatch(
                    expected.get().toString(), record.clusterUuid().toString()));
        }
        KeyValue memberKv = first(gets.get(3));
        long memberRev = memberKv == null ? 0 : memberKv.getModRevision();
        if (healing.isPresent() && memberKv != null) {
            Incarnation holder = holderOrNull(memberKv);
            boolean ours = holder != null && holder.equals(healing.get().fenced());
            boolean tampered = memberKv.getModRevision() == healing.get().tamperedRevision();
            if (!ours && !tampered) {
                return new Refused(new RegistrationResult.Superseded(who.nodeId(),
                        holder != null ? holder.toString() : "an undecodable record"));
            }
        }
        KeyValue epochKv = first(gets.get(1));
        KeyValue floorKv = first(gets.get(2));
        long epochRev = epochKv == null ? 0 : epochKv.getModRevision();
        long floorRev = floorKv == null ? 0 : floorKv.getModRevision();
        long last = Math.max(epochKv == null ? 0 : EpochRecord.parse(text(epochKv.getValue())).epoch(),
                floorKv == null ? 0 : EpochRecord.parse(text(floorKv.getValue())).epoch());
        NodeEpoch next = new NodeEpoch(Math.addExact(last, 1));
        Incarnation incarnation = Incarnation.random(who.nodeId(), next);
        Member member = new Member(incarnation, who.peer(), who.control(), ClusterIdentity.PROTOCOL, who.role());
        ClusterIdentity cluster = new ClusterIdentity(who.clusterName(), record.clusterUuid());

        long grantSent = clock.getAsLong();
        var grant = EtcdCalls.await(client.getLeaseClient().grant(config.leaseTtlSeconds()), config.etcdCallTimeoutMs());
        long leaseId = grant.getID();
        List<Cmp> guard = new java.util.ArrayList<>(List.of(
            new Cmp(bytes(keys.format()), Cmp.Op.EQUAL, CmpTarget.value(format.getValue())),
            new Cmp(bytes(keys.format()), Cmp.Op.EQUAL, CmpTarget.modRevision(format.getModRevision())),
            new Cmp(bytes(keys.epoch(node)), Cmp.Op.EQUAL, CmpTarget.modRevision(epochRev)),
            new Cmp(bytes(keys.epochFloor()), Cmp.Op.EQUAL, CmpTarget.modRevision(floorRev))));
        if (healing.isPresent()) { // a heal never replaces a record written after the read (another process's)
            guard.add(new Cmp(bytes(keys.member(node)), Cmp.Op.EQUAL, CmpTarget.modRevision(memberRev)));
        }
        Cmp[] compares = guard.toArray(Cmp[]::new);
        Op[] writes = {
            Op.put(bytes(keys.epoch(node)), bytes(new EpochRecord(next.value(), System.currentTimeMillis()).encode()),
                    PutOption.DEFAULT),
            Op.put(bytes(keys.member(node)), bytes(MemberCodec.encode(member)),
                    PutOption.builder().withLeaseId(leaseId).build()),
        };
        return commit(member, cluster, compares, writes, epochRev, leaseId, grantSent, grant.getTTL());
    }

    /**
     * The guarded registration transaction, retried while its result is ambiguous: the claim, a refusal when
     * another registration of the node won, or null to re-read (the format record, floor or member key moved).
     */
    private Outcome commit(Member member, ClusterIdentity cluster, Cmp[] compares, Op[] writes, long epochRev, long leaseId,
                           long grantSent, long ttlSeconds) throws EtcdCallFailed {
        String node = who.nodeId().value();
        for (int i = 1; i <= MAX_ATTEMPTS; i++) {
            TxnResponse txn;
            try {
                txn = EtcdCalls.await(kv.txn().If(compares).Then(writes).Else(get(keys.epoch(node))).commit(),
                        config.etcdCallTimeoutMs());
            } catch (EtcdCallFailed ambiguous) {
                Outcome resolved = resolveAmbiguous(member, epochRev, leaseId, grantSent, ttlSeconds, cluster);
                if (resolved != null) {
                    return resolved;
                }
                sleep(config.retryBackoffMinMs());
                continue; // nothing committed and nobody else moved the epoch: the same guarded txn again
            }
            if (txn.isSucceeded()) {
                return new Claimed(new Claim(cluster, member, leaseId, grantSent, ttlSeconds * 1000,
                        txn.getHeader().getRevision()));
            }
            revokeQuietly(leaseId);
            KeyValue nowEpoch = first(txn.getGetResponses().get(0));
            long nowRev = nowEpoch == null ? 0 : nowEpoch.getModRevision();
            if (nowRev != epochRev) {
                return new Refused(new RegistrationResult.Contended(who.nodeId(),
                        "another registration of node " + node + " committed epoch "
                                + (nowEpoch == null ? "?" : EpochRecord.parse(text(nowEpoch.getValue())).epoch())
                                + " between this registration's read and its transaction"));
            }
            return null; // format record, floor or (heal) member key moved: re-read (reports what changed)
        }
        revokeQuietly(leaseId);
        throw new EtcdCallFailed("registration transaction stayed ambiguous after " + MAX_ATTEMPTS + " tries",
                io.grpc.Status.Code.UNAVAILABLE, null);
    }

    /** After an ambiguous transaction: did ours commit (member key holds our id), or did another win? */
    private Outcome resolveAmbiguous(Member ours, long epochRev, long leaseId, long grantSent, long ttlSeconds,
                                     ClusterIdentity cluster) throws EtcdCallFailed {
        Incarnation inc = ours.incarnation();
        String node = inc.nodeId().value();
        TxnResponse r = EtcdCalls.await(kv.txn().Then(get(keys.member(node)), get(keys.epoch(node))).commit(),
                config.etcdCallTimeoutMs());
        KeyValue m = first(r.getGetResponses().get(0));
        if (m != null) {
            try {
                Member member = MemberCodec.decode(text(m.getValue()));
                if (member.incarnation().equals(inc)) {
                    return new Claimed(new Claim(cluster, ours, leaseId, grantSent, ttlSeconds * 1000, m.getModRevision()));
                }
            } catch (IllegalArgumentException ignored) {
                // not ours
            }
        }
        KeyValue e = first(r.getGetResponses().get(1));
        if ((e == null ? 0 : e.getModRevision()) != epochRev) {
            revokeQuietly(leaseId);
            return new Refused(new RegistrationResult.Contended(inc.nodeId(),
                    "another registration of node " + node + " committed while this one was ambiguous"));
        }
        return null;
    }

    /** The incarnation a member record names, or null if it does not decode. */
    private static Incarnation holderOrNull(KeyValue kv) {
        try {
            return MemberCodec.decode(text(kv.getValue())).incarnation();
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private void revokeQuietly(long leaseId) {
        try {
            EtcdCalls.await(client.getLeaseClient().revoke(leaseId), config.etcdCallTimeoutMs());
        } catch (EtcdCallFailed ignored) {
            // the unused lease expires by itself after its TTL; it holds no key
        }
    }

    private static Op get(String key) {
        return Op.get(bytes(key), GetOption.DEFAULT);
    }

    private static KeyValue first(GetResponse r) {
        return r.getKvs().isEmpty() ? null : r.getKvs().get(0);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms); // retry backoff between etcd attempts, not test synchronization
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
