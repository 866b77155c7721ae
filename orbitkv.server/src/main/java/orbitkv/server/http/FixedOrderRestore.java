package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.Residence;
import orbitkv.server.transfer.PeerTransfer;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.Backend;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.Destination;
import orbitkv.transfer.Grant;
import orbitkv.transfer.GrantRequest;
import orbitkv.transfer.Intent;
import orbitkv.transfer.PayloadSource.CopyOutcome;
import orbitkv.transfer.PayloadSource.PinResult;
import orbitkv.transfer.ReadHandle;
import orbitkv.transfer.ReadOutcome;
import orbitkv.transfer.ReadRefusal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code POST /cache/restore} (issue 13 item 5): the recoverable prefix in request order, each key from the
 * best listed replica in a fixed order: local DRAM, local SSD, peer DRAM, peer SSD, peers ordered by owner node
 * id, node epoch and incarnation id (never by the order the index listed them).
 *
 * <ul>
 *   <li>Local residences are read through the one pin contract (exact generation, CRC32C-verified copy).</li>
 *   <li>Peer replicas are evidence, never grants (INV-2): consecutive keys whose best replica is the same peer
 *       source (owner and medium) form one route, authorized in one call; the source checks its incarnation and
 *       each exact generation and pins the bytes. Granted blocks are READ (TCP or same-host shared memory) straight
 *       into the response's own records (requester-owned memory, no extra copy on TCP) and verified against the
 *       CRC32C computed at save time; the grant is released after every READ of it physically ended (INV-8).</li>
 *   <li>A refusal before any byte moved (stale generation, not resident: the source evicted it after the index
 *       listed it; pins exhausted; unreachable) is request-local evidence (ROUTE-7): that replica, or that source,
 *       is left out for this request and the key is tried on the next replica in the fixed order; the shared index
 *       is never touched. A key no replica can serve ends the prefix with a named stop.</li>
 *   <li>A READ that failed after admission (connection lost, checksum mismatch, its deadline) ends the prefix
 *       ({@code payload-failure} or {@code deadline}); nothing partially filled is exposed (the engine zero-fills the
 *       range after the READ stopped, and the record is dropped) and nothing is retried blindly (ROUTE-8).</li>
 *   <li>Fetched blocks are not retained locally: they exist only in the response.</li>
 * </ul>
 *
 * <p>The response header {@code X-OrbitKV-Route} (at most {@value #HEADER_BYTES_MAX} ASCII bytes) says per block
 * which route served it: {@code r=<restored> stop=<stop>[ refusal=..][ failure=..][ corrupt=..] routes=<run>,...}
 * with runs {@code local-dram[0,2):ready}, {@code peer-dram@b/1[2,5):ready+shm}, {@code peer-ssd@c/1[5,6):ready+tcp}.
 */
final class FixedOrderRestore {
    private static final Logger LOG = LoggerFactory.getLogger(FixedOrderRestore.class);
    /** Bound of the route header. */
    static final int HEADER_BYTES_MAX = 512;
    /** READs of one route in flight at once (in order), each into its own record. */
    static final int READS_IN_FLIGHT_PER_ROUTE = 4;
    /** Bound on waiting for a READ outcome beyond its own deadline (the engine delivers it once the READ stopped). */
    private static final long OUTCOME_SLACK_MS = 10_000;

    private final LocalTiers tiers;
    private final Optional<PeerTransfer> transfer;
    private final ApiMetrics metrics;
    private final ByteBufAllocator alloc;
    private final JsonRequests.RestoreRequest req;
    private final DistributedMetadata.Lookup lookup;
    private final Incarnation self;
    private final long deadlineNs;
    private final long bodyBytesMax;
    private final BackendPolicy policy;
    private final RestoreBody body;
    private final List<Served> served = new ArrayList<>();
    /** Request-local exclusions (ROUTE-7): "i|owner|medium" for one key's replica, "*|owner|medium" for a source. */
    private final Set<String> excluded = new HashSet<>();
    /** The last refusal seen per key index, named in the stop when no replica is left. */
    private final Map<Integer, String> lastRefusal = new HashMap<>();
    private long total;
    private Stop stop;

    /** Why the prefix ended, with the optional detail fields of the header. */
    record Stop(String name, String refusal, String failure, String corrupt) {
        static Stop of(String name) {
            return new Stop(name, null, null, null);
        }
    }

    /** One delivered block: its framed record and the route that served it. */
    record Served(ByteBuf record, String kind, String owner, Backend backend, long payloadBytes) {
        /** The run label: kind, owner (peers) and backend (peers). */
        String label() {
            return owner == null ? kind : kind + "@" + owner + "|" + (backend == Backend.SHARED_MEMORY ? "shm" : "tcp");
        }
    }

    FixedOrderRestore(LocalTiers tiers, Optional<PeerTransfer> transfer, ApiMetrics metrics, ByteBufAllocator alloc,
            JsonRequests.RestoreRequest req, DistributedMetadata.Lookup lookup, long bodyBytesMax) {
        this.tiers = tiers;
        this.transfer = transfer;
        this.metrics = metrics;
        this.alloc = alloc;
        this.req = req;
        this.lookup = lookup;
        this.self = transfer.map(PeerTransfer::self).orElse(null);
        this.deadlineNs = System.nanoTime() + req.deadlineMs() * 1_000_000L;
        this.bodyBytesMax = bodyBytesMax;
        this.policy = req.backend().orElseGet(() -> transfer.map(PeerTransfer::defaultBackend)
                .orElse(BackendPolicy.SHARED_MEMORY_PREFERRED));
        this.body = new RestoreBody(alloc, Math.max(2, req.keys().size()), tiers.copyOut());
    }

    /** Runs the restore: the response body (the served records in request order) and its headers. */
    ApiResponse run() {
        try {
            int i = 0;
            while (i < req.keys().size() && stop == null) {
                if (System.nanoTime() - deadlineNs > 0) {
                    stop = Stop.of("deadline");
                    break;
                }
                i += restoreFrom(i);
            }
            if (stop == null) {
                stop = Stop.of("complete");
            }
            for (Served s : served) {
                body.addComponent(true, s.record());
                metrics.restored(s.kind(), s.backend(), s.payloadBytes());
            }
        } catch (RuntimeException | Error e) {
            if (body.numComponents() == 0) { // records not yet handed to the body are released here
                served.forEach(s -> s.record().release());
            }
            body.release();
            throw e;
        }
        return new ApiResponse(200, BlockFraming.CONTENT_TYPE, body, Map.of(CacheApi.RESTORED_HEADER,
                Integer.toString(served.size()), CacheApi.ROUTE_HEADER, header()));
    }

    /**
     * Serves key {@code i} (and possibly the keys after it, from the same peer route); returns how many keys were
     * served. Zero with no stop means request-local evidence was added and key {@code i} is tried again.
     */
    private int restoreFrom(int i) {
        StateKey key = req.keys().get(i);
        LocalAttempt local = restoreLocal(key);
        if (local.record() != null) {
            served.add(local.record());
            return 1;
        }
        if (local.final_()) {
            stop = local.miss();
            return 0;
        }
        List<Replica> peers = peerCandidates(i);
        if (peers.isEmpty()) {
            stop = local.miss() != null ? local.miss() : noRoute(i);
            return 0;
        }
        return fetchRoute(i, peers.getFirst());
    }

    // ------------------------------------------------------------------ local

    /** A local read: a served record, or the miss that would stop here ({@code final_}: peers cannot help). */
    private record LocalAttempt(Served record, Stop miss, boolean final_) {}

    private long room() {
        return bodyBytesMax - total;
    }

    /**
     * Reads {@code key} from its local residences, DRAM first. A residence replaced between the read and the pin is
     * pinned once more at its current generation; an evicted one is skipped; a broken one was evicted by the tier
     * and the next medium (then the peers) is tried.
     */
    private LocalAttempt restoreLocal(StateKey key) {
        Stop failure = null;
        for (Residence r : tiers.residences(key)) {
            PinResult p = tiers.pin(key, r.medium(), r.sequence());
            if (p instanceof PinResult.StaleGeneration stale) {
                p = tiers.pin(key, r.medium(), stale.currentSequence());
            }
            switch (p) {
                case PinResult.Pinned pin -> {
                    try (pin) {
                        long record = BlockFraming.RECORD_HEADER_BYTES + key.key().length + pin.sizeBytes();
                        if (record > room()) {
                            return new LocalAttempt(null, Stop.of("destination-capacity"), true);
                        }
                        if (!body.take(record)) {
                            return new LocalAttempt(null, Stop.of("response-memory"), true);
                        }
                        ByteBuf rec = alloc.directBuffer((int) record);
                        BlockFraming.writeHeader(rec, key.key(), pin.sizeBytes());
                        ByteBuffer dst = rec.nioBuffer(rec.writerIndex(), (int) pin.sizeBytes());
                        switch (pin.copyTo(dst)) {
                            case CopyOutcome.Copied c -> {
                                rec.writerIndex(rec.writerIndex() + (int) pin.sizeBytes());
                                total += record;
                                return new LocalAttempt(new Served(rec, localKind(r.medium()), null, null, pin.sizeBytes()),
                                        null, false);
                            }
                            case CopyOutcome.Corrupt c -> {
                                rec.release(); // never exposed: its content is undefined
                                body.giveBack(record);
                                LOG.warn("restore: stored block broken and evicted ({}): {}", c.reason(), c.detail());
                                failure = new Stop("corrupt-" + r.medium().name().toLowerCase(Locale.ROOT), null, null,
                                        c.reason());
                            }
                        }
                    }
                }
                case PinResult.PinLimit limit -> failure = failure != null ? failure : Stop.of("pins-exhausted");
                case PinResult.Closed closed -> failure = failure != null ? failure : Stop.of("closed");
                case PinResult.NotResident gone -> { } // evicted since it was listed
                case PinResult.StaleGeneration again -> { } // replaced twice meanwhile: a later restore sees it
            }
        }
        return new LocalAttempt(null, failure, false);
    }

    private static String localKind(Medium m) {
        return m == Medium.DRAM ? "local-dram" : "local-ssd";
    }

    private static String peerKind(Medium m) {
        return m == Medium.DRAM ? "peer-dram" : "peer-ssd";
    }

    // ------------------------------------------------------------------ peers

    /** The fixed order of peer replicas: DRAM before SSD, then owner node id, node epoch, incarnation id. */
    static final Comparator<Replica> PEER_ORDER = Comparator.comparing(Replica::medium)
            .thenComparing(r -> r.owner().nodeId())
            .thenComparing(r -> r.owner().epoch())
            .thenComparing(r -> r.owner().id());

    /** Key {@code i}'s eligible peer replicas in the fixed order: fresh, not this Manager, not excluded. */
    private List<Replica> peerCandidates(int i) {
        if (transfer.isEmpty()) {
            return List.of();
        }
        List<Replica> out = new ArrayList<>();
        for (Replica r : lookup.replicas().get(i)) {
            if (!r.stale() && !r.owner().equals(self) && !excluded(i, r.owner(), r.medium())) {
                out.add(r);
            }
        }
        out.sort(PEER_ORDER);
        return out;
    }

    private boolean excluded(int i, Incarnation owner, Medium medium) {
        String source = owner + "|" + medium;
        return excluded.contains("*|" + source) || excluded.contains(i + "|" + source);
    }

    private void excludeKey(int i, Incarnation owner, Medium medium, String refusal) {
        excluded.add(i + "|" + owner + "|" + medium);
        lastRefusal.put(i, refusal);
    }

    private void excludeSource(int i, Incarnation owner, Medium medium, String refusal) {
        excluded.add("*|" + owner + "|" + medium);
        lastRefusal.put(i, refusal);
    }

    /** Why no route serves key {@code i}, in the recovery planner's words (PrefixStop trace names). */
    private Stop noRoute(int i) {
        List<Replica> listed = lookup.replicas().get(i);
        if (listed.isEmpty()) {
            return Stop.of(switch (lookup.coverage()) {
                case CompleteAtWatermarks -> "absent-at-watermarks";
                case PartialHints -> "not-in-partial-hints";
                case Unavailable -> "metadata-unavailable";
            });
        }
        if (transfer.isEmpty()) {
            return Stop.of("no-qualified-path");
        }
        if (listed.stream().allMatch(Replica::stale)) {
            return Stop.of("stale-hints-only");
        }
        return new Stop("rejected-in-request", lastRefusal.getOrDefault(i, "refused"), null, null);
    }

    /** The replica of key {@code k} at exactly this source, or null. */
    private Replica at(int k, Incarnation owner, Medium medium) {
        for (Replica r : peerCandidates(k)) {
            if (r.owner().equals(owner) && r.medium() == medium) {
                return r;
            }
        }
        return null;
    }

    /**
     * Authorizes and READs the route that starts at key {@code i} on {@code best}'s source: key {@code i} and each
     * following key that is not local and whose best replica is the same source. Returns the keys served.
     */
    private int fetchRoute(int i, Replica best) {
        PeerTransfer t = transfer.orElseThrow();
        Optional<Member> member = t.member(best.owner());
        if (member.isEmpty()) { // left the view since the lookup: not admitted, nothing to ask
            excludeSource(i, best.owner(), best.medium(), "source-not-admitted");
            return 0;
        }
        List<BlockRef> refs = new ArrayList<>();
        refs.add(new BlockRef(req.keys().get(i), best.medium(), best.sequence()));
        for (int k = i + 1; k < req.keys().size() && refs.size() < t.config().authorizeKeysMax(); k++) {
            if (!tiers.residences(req.keys().get(k)).isEmpty()) {
                break; // local wins for k
            }
            List<Replica> c = peerCandidates(k);
            if (c.isEmpty() || !c.getFirst().owner().equals(best.owner()) || c.getFirst().medium() != best.medium()) {
                break;
            }
            refs.add(new BlockRef(req.keys().get(k), best.medium(), c.getFirst().sequence()));
        }
        long remainingMs = remainingMs();
        if (remainingMs <= 0) {
            stop = Stop.of("deadline");
            return 0;
        }
        Duration timeout = Duration.ofMillis(Math.min(t.config().authorizeTimeoutMs(), remainingMs));
        AuthorizeOutcome outcome;
        try {
            outcome = t.engine().authorize(new GrantRequest(member.get(), Intent.FOREGROUND, refs, timeout))
                    .toCompletableFuture().get(timeout.toMillis() + OUTCOME_SLACK_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = Stop.of("cancelled");
            return 0;
        } catch (Exception e) {
            excludeSource(i, best.owner(), best.medium(), "unreachable");
            return 0;
        }
        return switch (outcome) {
            case AuthorizeOutcome.Refused r -> {
                excludeSource(i, best.owner(), best.medium(), name(r.reason()));
                yield 0;
            }
            case AuthorizeOutcome.Failed f -> {
                excludeSource(i, best.owner(), best.medium(), name(f.failure()));
                yield 0;
            }
            case AuthorizeOutcome.NothingGranted n -> {
                for (int b = 0; b < n.refusals().size(); b++) {
                    excludeKey(i + b, best.owner(), best.medium(), name(n.refusals().get(b).reason()));
                }
                yield 0;
            }
            case AuthorizeOutcome.Granted g -> readGranted(i, best, g.grant());
        };
    }

    /** READs the leading granted blocks of {@code grant} in order; a refused block is request-local evidence. */
    private int readGranted(int i, Replica best, Grant grant) {
        PeerTransfer t = transfer.orElseThrow();
        List<BlockResult> results = grant.blocks();
        int lead = 0;
        while (lead < results.size() && results.get(lead) instanceof BlockResult.Granted) {
            lead++;
        }
        if (lead < results.size() && results.get(lead) instanceof BlockResult.Refused r) {
            excludeKey(i + lead, best.owner(), best.medium(), name(r.reason()));
        }
        ArrayDeque<Pending> inFlight = new ArrayDeque<>();
        Stop submitStop = null; // a block that cannot be submitted ends the prefix after those in flight
        int next = 0;
        int done = 0;
        try {
            while (true) {
                while (submitStop == null && next < lead && inFlight.size() < READS_IN_FLIGHT_PER_ROUTE) {
                    Submitted sub = submit(i + next, grant, next, (BlockResult.Granted) results.get(next), best);
                    if (sub.stop() != null) {
                        submitStop = sub.stop();
                        break;
                    }
                    inFlight.add(sub.pending());
                    next++;
                }
                Pending p = inFlight.poll();
                if (p == null) { // every submitted block was served
                    if (stop == null && submitStop != null) {
                        stop = submitStop;
                    }
                    break;
                }
                if (!complete(p, best)) {
                    break;
                }
                done++;
            }
        } finally {
            for (Pending p : inFlight) { // after a failure: stop the rest, wait until they physically stopped
                p.handle().cancel();
                await(p.handle());
                p.record().release();
                body.giveBack(p.recordBytes());
                total -= p.recordBytes();
            }
            t.engine().release(grant); // sent once every READ of the grant terminated
        }
        return done;
    }

    /** One submitted READ and the record it fills. */
    private record Pending(int keyIndex, ReadHandle handle, ByteBuf record, long recordBytes, long payloadBytes) {}

    /** A submitted READ, or why the block could not be submitted. */
    private record Submitted(Pending pending, Stop stop) {}

    private Submitted submit(int k, Grant grant, int block, BlockResult.Granted g, Replica best) {
        StateKey key = req.keys().get(k);
        long recordBytes = BlockFraming.RECORD_HEADER_BYTES + key.key().length + g.lengthBytes();
        if (recordBytes > room()) {
            return new Submitted(null, Stop.of("destination-capacity"));
        }
        long remainingMs = remainingMs();
        if (remainingMs <= 0) {
            return new Submitted(null, Stop.of("deadline"));
        }
        if (!body.take(recordBytes)) {
            return new Submitted(null, Stop.of("response-memory"));
        }
        ByteBuf rec = alloc.directBuffer((int) recordBytes);
        BlockFraming.writeHeader(rec, key.key(), g.lengthBytes());
        Destination dst = Destination.of(rec.nioBuffer(rec.writerIndex(), (int) g.lengthBytes()));
        ReadHandle h = transfer.orElseThrow().engine().read(grant, block, dst, policy, Duration.ofMillis(remainingMs));
        total += recordBytes;
        return new Submitted(new Pending(k, h, rec, recordBytes, g.lengthBytes()), null);
    }

    /** Waits for a READ's outcome; true if it is delivered (served), else the stop or exclusion is recorded. */
    private boolean complete(Pending p, Replica best) {
        ReadOutcome o = await(p.handle());
        if (o instanceof ReadOutcome.Completed c) {
            p.record().writerIndex(p.record().writerIndex() + (int) c.bytes());
            served.add(new Served(p.record(), peerKind(best.medium()), owner(best.owner()), c.backend(), c.bytes()));
            return true;
        }
        p.record().release(); // nothing partial is exposed (the engine zero-filled the range after the READ stopped)
        body.giveBack(p.recordBytes());
        total -= p.recordBytes();
        switch (o) {
            case ReadOutcome.Refused r when requesterSide(r.reason()) ->
                    stop = new Stop("receive-credits", name(r.reason()), null, null);
            case ReadOutcome.Refused r -> excludeKey(p.keyIndex(), best.owner(), best.medium(), name(r.reason()));
            case ReadOutcome.TimedOut x -> stop = new Stop("deadline", null, "timed-out", null);
            case ReadOutcome.Cancelled x -> stop = new Stop("cancelled", null, "cancelled", null);
            case ReadOutcome.Failed f -> {
                LOG.warn("restore: READ of {} from {} failed ({}): {}", req.keys().get(p.keyIndex()).keyHex(),
                        best.owner(), f.reason(), f.detail());
                stop = new Stop("payload-failure", null, name(f.reason()), null);
            }
            case ReadOutcome.Completed c -> throw new IllegalStateException("handled above");
        }
        return false;
    }

    /** Refusals of this requester's own admission: another replica would be refused the same way. */
    private static boolean requesterSide(ReadRefusal r) {
        return switch (r) {
            case CREDITS_EXHAUSTED, READS_IN_FLIGHT_LIMIT, CONNECTIONS_EXHAUSTED, DESTINATION_TOO_SMALL, ENGINE_CLOSED -> true;
            default -> false;
        };
    }

    private ReadOutcome await(ReadHandle h) {
        try {
            return h.outcome().toCompletableFuture().get(remainingMs() + OUTCOME_SLACK_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            h.cancel();
            return h.outcome().toCompletableFuture().join(); // delivered once the READ stopped
        } catch (Exception e) {
            throw new IllegalStateException("a READ outcome was not delivered within its deadline plus "
                    + OUTCOME_SLACK_MS + " ms", e);
        }
    }

    private long remainingMs() {
        return Math.max(0, (deadlineNs - System.nanoTime()) / 1_000_000L);
    }

    private static String owner(Incarnation i) {
        return i.nodeId().value() + "/" + i.epoch().value();
    }

    /** A closed enum as a lowercase trace name. */
    static String name(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    // ------------------------------------------------------------------ header

    /** {@code r=<n> stop=<stop>[ refusal=..][ failure=..][ corrupt=..] routes=<runs>[,+N]}, at most 512 bytes. */
    String header() {
        StringBuilder b = new StringBuilder(128).append("r=").append(served.size()).append(" stop=").append(stop.name());
        if (stop.refusal() != null) {
            b.append(" refusal=").append(stop.refusal());
        }
        if (stop.failure() != null) {
            b.append(" failure=").append(stop.failure());
        }
        if (stop.corrupt() != null) {
            b.append(" corrupt=").append(stop.corrupt());
        }
        List<String> runs = new ArrayList<>();
        int from = 0;
        for (int k = 1; k <= served.size(); k++) {
            if (k == served.size() || !served.get(k).label().equals(served.get(from).label())) {
                Served s = served.get(from);
                StringBuilder r = new StringBuilder(s.kind());
                if (s.owner() != null) {
                    r.append('@').append(s.owner());
                }
                r.append('[').append(from).append(',').append(k).append("):ready");
                if (s.backend() != null) {
                    r.append(s.backend() == Backend.SHARED_MEMORY ? "+shm" : "+tcp");
                }
                runs.add(r.toString());
                from = k;
            }
        }
        if (!runs.isEmpty()) {
            b.append(" routes=");
            int shown = 0;
            for (String r : runs) {
                int reserve = runs.size() - shown - 1 > 0 ? 6 : 0;
                if (b.length() + 1 + r.length() + reserve > HEADER_BYTES_MAX) {
                    break;
                }
                b.append(shown == 0 ? "" : ",").append(r);
                shown++;
            }
            if (shown < runs.size()) {
                b.append(shown == 0 ? "+" : ",+").append(runs.size() - shown);
            }
        }
        return b.toString();
    }
}
