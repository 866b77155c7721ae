package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.Restore;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.LoadSummary;
import orbitkv.recovery.RouteSelection;
import orbitkv.recovery.RouteSource;
import orbitkv.recovery.TransferPorts;
import orbitkv.server.incarnation.DistributedMetadata;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.InPlace;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.RestoreArena;
import orbitkv.server.tier.Residence;
import orbitkv.server.transfer.PeerTransfer;
import orbitkv.server.transfer.ReceiveCredits;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.SourceLoad;
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
import orbitkv.transfer.ReadResult;
import orbitkv.transfer.RefusalReason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code POST /cache/restore} through the recovery planner (issue 14; DESIGN §8 "Complete recovery route
 * selection"): the demand (the request's keys in chain order, HostReady, its deadline, the response's byte bound),
 * the evidence (local residences per key, the index's fresh replicas, the coverage), the planner's choice (the
 * fixed policy: longest legal span, local before peer, DRAM before SSD, owner order; or, in COST_DRIVEN mode, a
 * switch earned by executed observations), and its execution through {@link Ports}: receive credits and the
 * destination first, then the source's authorization (a local pin of the exact generation, or a peer's Authorize),
 * then the READ; at most {@code --route-replans-max} replans after a pre-submission refusal, on request-local
 * evidence only (ROUTE-7); after submission a route keeps its grant and credits until drain, and a payload failure
 * ends the prefix without a retry (ROUTE-8).
 *
 * <p>Headers: {@code X-OrbitKV-Route} (the served runs with their READ backend and the named stop, docs/api.md) and
 * {@code X-OrbitKV-Route-Trace} (the planner's bounded trace: demand, eligible sources, decision, prediction, error,
 * replans, readiness, drain).
 */
final class PlannedRestore {
    private static final Logger LOG = LoggerFactory.getLogger(PlannedRestore.class);
    /** Bound of the route header. */
    static final int HEADER_BYTES_MAX = 512;
    /** READs of one peer route in flight at once (in order), each into its own record. */
    static final int READS_IN_FLIGHT_PER_ROUTE = 4;
    /** Bound on waiting for an Authorize answer beyond its own timeout (the engine answers by then). */
    private static final long AUTHORIZE_SLACK_MS = 5_000;

    private final LocalTiers tiers;
    private final Optional<PeerTransfer> transfer;
    private final ApiMetrics metrics;
    private final ByteBufAllocator alloc;
    private final JsonRequests.RestoreRequest req;
    private final DistributedMetadata.Lookup lookup;
    private final RouteSelection routes;
    private final long bodyBytesMax;
    private final BackendPolicy policy;
    private final CopyOutBudget budget;
    private final long deadlineNanos;
    /** Every destination this request created, by route (identity: the executor hands back the same Route). */
    private final Map<Route, Records> destinations = new IdentityHashMap<>();
    /** Request-local notes for the route header: the last refusal, a broken local block, a payload failure. */
    private volatile String lastRefusal;
    private volatile String corrupt;
    private volatile Medium corruptMedium;
    private volatile String failure;
    private volatile boolean receiveCredits;
    private volatile boolean responseMemory;

    PlannedRestore(LocalTiers tiers, Optional<PeerTransfer> transfer, ApiMetrics metrics, ByteBufAllocator alloc,
            JsonRequests.RestoreRequest req, DistributedMetadata.Lookup lookup, RouteSelection routes, long bodyBytesMax) {
        this.tiers = tiers;
        this.transfer = transfer;
        this.metrics = metrics;
        this.alloc = alloc;
        this.req = req;
        this.lookup = lookup;
        this.routes = routes;
        this.bodyBytesMax = bodyBytesMax;
        this.budget = tiers.copyOut();
        this.deadlineNanos = System.nanoTime() + req.deadlineMs() * 1_000_000L;
        this.policy = req.backend().orElseGet(() -> transfer.map(PeerTransfer::defaultBackend)
                .orElse(BackendPolicy.SHARED_MEMORY_PREFERRED));
    }

    // ------------------------------------------------------------------ demand and evidence

    /** Framing bytes of every record of the demand (the payload capacity is the body bound minus these). */
    private static long framingBytes(List<StateKey> keys) {
        long f = 0;
        for (StateKey k : keys) {
            f += BlockFraming.RECORD_HEADER_BYTES + k.key().length;
        }
        return f;
    }

    /**
     * The demand of a restore: HostReady by the request's deadline; its payload capacity is the smaller of the body
     * bound and the restore memory still free, minus the framing of every record.
     */
    private Demand demand() {
        long room = Math.min(bodyBytesMax, budget.bytesMax() - budget.heldBytes());
        return Demand.hostReady(req.namespace(), req.keys(), deadlineNanos)
                .withDestinationBytesMax(Math.max(0, room - framingBytes(req.keys())));
    }

    /** The evidence of {@code keys}: local residences, the index's replicas on other owners, the coverage. */
    static Evidence evidence(LocalTiers tiers, List<StateKey> keys, DistributedMetadata.Lookup lookup,
            Optional<PeerTransfer> transfer) {
        Incarnation self = transfer.map(PeerTransfer::self).orElse(null);
        List<KeyEvidence> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            List<LocalResidence> local = new ArrayList<>(2);
            for (Residence r : tiers.residences(keys.get(i))) {
                local.add(new LocalResidence(r.medium(), r.sequence(), r.sizeBytes()));
            }
            List<Replica> remote = new ArrayList<>();
            for (Replica r : lookup.replicas().get(i)) {
                if (!r.owner().equals(self) && remote.size() < KeyEvidence.REMOTE_REPLICAS_MAX) {
                    remote.add(r);
                }
            }
            out.add(new KeyEvidence(keys.get(i), local, remote, lookup.truncated().get(i)));
        }
        java.util.Set<RouteKind> kinds = transfer.isPresent() ? Evidence.allKinds()
                : java.util.EnumSet.of(RouteKind.LOCAL_DRAM, RouteKind.LOCAL_SSD);
        return new Evidence(orbitkv.index.Coverage.valueOf(lookup.coverage().name()), lookup.viewGeneration(), kinds, out);
    }

    // ------------------------------------------------------------------ run

    /** Runs the restore: the response body (the delivered records in request order) and its headers. */
    ApiResponse run() {
        Restore<Records> r;
        try {
            r = routes.restore(demand(), evidence(tiers, req.keys(), lookup, transfer), new Ports());
        } catch (RuntimeException | Error e) {
            abandonAll(java.util.Set.of());
            throw e;
        }
        RestoreBody body = new RestoreBody(alloc, Math.max(2, req.keys().size()), budget);
        List<Served> served = new ArrayList<>(r.restoredKeys());
        java.util.Set<Records> delivered = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        try {
            for (Restore.Delivered<Records> d : r.delivered()) {
                Records rec = d.destination();
                delivered.add(rec);
                rec.deliver();
                body.adopt(rec.bytes); // from now on the body returns these bytes to the budget when freed
                for (int b = 0; b < rec.records.size(); b++) {
                    body.addComponent(true, rec.records.get(b));
                    Served s = new Served(rec.route.kind().traceName(), owner(rec.route.source()), rec.backends[b]);
                    served.add(s);
                    metrics.restored(s.kind(), s.backend(), rec.route.blocks().get(b).sizeBytes());
                }
            }
        } catch (RuntimeException | Error e) {
            body.release();
            abandonAll(delivered);
            throw e;
        }
        abandonAll(delivered);
        if (r.stop() == PrefixStop.DESTINATION_CAPACITY && r.restoredKeys() < req.keys().size()) {
            countResponseMemory(r.restoredKeys());
        }
        return new ApiResponse(200, BlockFraming.CONTENT_TYPE, body, Map.of(CacheApi.RESTORED_HEADER,
                Integer.toString(r.restoredKeys()), CacheApi.ROUTE_HEADER, header(served, stop(r.stop())),
                CacheApi.ROUTE_TRACE_HEADER, r.trace().header()));
    }

    /** Every destination not delivered is freed now if released, else when its drain releases it. */
    private void abandonAll(java.util.Set<Records> delivered) {
        List<Records> all;
        synchronized (destinations) {
            all = List.copyOf(destinations.values());
        }
        for (Records rec : all) {
            if (!delivered.contains(rec)) {
                rec.abandon();
            }
        }
    }

    /**
     * The capacity stop is named {@code response-memory} when the restore memory, not the body bound, kept the next
     * record out; the budget counts that refusal (its metric) by being asked for the record once.
     */
    private void countResponseMemory(int next) {
        StateKey key = req.keys().get(next);
        long size = tiers.residences(key).stream().mapToLong(Residence::sizeBytes).findFirst()
                .orElse(lookup.replicas().get(next).stream().mapToLong(Replica::sizeBytes).findFirst().orElse(0));
        long record = BlockFraming.RECORD_HEADER_BYTES + key.key().length + size;
        if (budget.tryTake(record)) {
            budget.release(record); // freed meanwhile: the body bound or the planner's framing margin stopped it
        } else {
            responseMemory = true;
        }
    }

    /** One delivered block: route kind, source owner (peers) and backend (peers). */
    record Served(String kind, String owner, Backend backend) {
        String label() {
            return kind + (owner == null ? "" : "@" + owner) + (backend == null ? "" : backend == Backend.SHARED_MEMORY
                    ? "+shm" : "+tcp");
        }
    }

    /** The header's stop and its detail, in the API's names (docs/api.md). */
    private String stop(PrefixStop stop) {
        return switch (stop) {
            case REJECTED_IN_REQUEST, REPLANS_EXHAUSTED -> {
                if (corrupt != null && corruptMedium != null) {
                    yield "corrupt-" + corruptMedium.name().toLowerCase(Locale.ROOT) + " corrupt=" + corrupt;
                }
                if (responseMemory) {
                    yield "response-memory";
                }
                yield stop.traceName() + (lastRefusal == null ? "" : " refusal=" + lastRefusal);
            }
            case DESTINATION_CAPACITY -> responseMemory ? "response-memory" : stop.traceName();
            case PAYLOAD_FAILURE -> receiveCredits ? "receive-credits refusal=" + failure
                    : "payload-failure failure=" + failure;
            case DEADLINE -> failure != null && failure.equals("timed-out") ? "deadline failure=timed-out" : "deadline";
            default -> stop.traceName();
        };
    }

    /** {@code r=<n> stop=<stop>[ detail] routes=<runs>[,+N]}, at most 512 bytes. */
    static String header(List<Served> served, String stop) {
        StringBuilder b = new StringBuilder(128).append("r=").append(served.size()).append(" stop=").append(stop);
        List<String> runs = new ArrayList<>();
        int from = 0;
        for (int k = 1; k <= served.size(); k++) {
            if (k == served.size() || !served.get(k).label().equals(served.get(from).label())) {
                Served s = served.get(from);
                runs.add(s.kind() + (s.owner() == null ? "" : "@" + s.owner()) + "[" + from + "," + k + "):ready"
                        + (s.backend() == null ? "" : s.backend() == Backend.SHARED_MEMORY ? "+shm" : "+tcp"));
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

    private static String owner(RouteSource s) {
        return s instanceof RouteSource.Peer p ? p.owner().nodeId().value() + "/" + p.owner().epoch().value() : null;
    }

    /** A closed enum as a lowercase trace name. */
    static String name(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private long remainingMs() {
        return Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000L);
    }

    // ------------------------------------------------------------------ destinations

    /**
     * One route's destination: a framed record per block (header written, payload filled by the READ), charged to
     * the restore memory budget until it is freed or handed to the response body. Released by the executor exactly
     * once (after drain when submitted); a delivered destination belongs to the response.
     */
    final class Records {
        final Route route;
        final List<ByteBuf> records;
        final long bytes;
        final Backend[] backends;
        private boolean ready;
        private boolean released;
        private boolean delivered;
        private boolean abandoned;
        private boolean freed;

        /** The receive credits this route holds until the executor releases it (peer routes), else null and 0. */
        private final ReceiveCredits window;
        final long creditBytes;

        Records(Route route, List<ByteBuf> records, long bytes, ReceiveCredits window, long creditBytes) {
            this.route = route;
            this.records = records;
            this.bytes = bytes;
            this.backends = new Backend[records.size()];
            this.window = window;
            this.creditBytes = creditBytes;
        }

        /** The payload range of block {@code b}, after its header. */
        ByteBuffer payload(int b) {
            ByteBuf rec = records.get(b);
            return rec.nioBuffer(rec.writerIndex(), (int) route.blocks().get(b).sizeBytes());
        }

        /**
         * Block {@code b}'s verified payload is sent from where it is stored: its record becomes the header followed
         * by {@code bytes}, and owns {@code pin} until the record is freed (written, or dropped with the response).
         */
        void sendInPlace(int b, ByteBuffer bytes, PinResult.Pinned pin) {
            ByteBuf header = records.get(b);
            RouteBlock block = route.blocks().get(b);
            if (header.readableBytes() != BlockFraming.RECORD_HEADER_BYTES + block.key().key().length
                    || bytes.remaining() != block.sizeBytes()) {
                throw new IllegalStateException("an in-place record is its header alone, then exactly the payload");
            }
            records.set(b, new InPlaceRecord(alloc, header, bytes, pin));
        }

        /** Block {@code b}'s payload arrived and was verified. */
        void filled(int b, Backend backend) {
            ByteBuf rec = records.get(b);
            rec.writerIndex(rec.writerIndex() + (int) route.blocks().get(b).sizeBytes());
            backends[b] = backend;
        }

        synchronized void ready() {
            ready = true;
        }

        synchronized void release() {
            if (!released && window != null) {
                window.release(creditBytes); // after drain when submitted: the READs no longer write (ROUTE-11)
            }
            released = true;
            if (!ready || abandoned) {
                free();
            }
        }

        synchronized void deliver() {
            if (!ready || freed) {
                throw new IllegalStateException("a delivered destination is ready and not freed");
            }
            delivered = true;
        }

        synchronized void abandon() {
            abandoned = true;
            if (released) {
                free();
            }
        }

        private void free() {
            if (freed || delivered) {
                return;
            }
            freed = true;
            records.forEach(ByteBuf::release);
            budget.release(bytes);
        }
    }

    // ------------------------------------------------------------------ ports

    /**
     * The receive credits of a peer route: the bytes its READs may have in flight at once (its
     * {@value #READS_IN_FLIGHT_PER_ROUTE} largest blocks), at most the whole window; {@link PeerGrant} submits
     * within them. Never less than the largest block, which the configuration keeps within the window.
     */
    static long creditBytes(Route route, long windowBytesMax) {
        long[] sizes = route.blocks().stream().mapToLong(RouteBlock::sizeBytes).sorted().toArray();
        long sum = 0;
        for (int i = sizes.length - 1; i >= 0 && i >= sizes.length - READS_IN_FLIGHT_PER_ROUTE; i--) {
            sum += sizes[i];
        }
        long largest = sizes.length == 0 ? 0 : sizes[sizes.length - 1];
        return Math.max(1, Math.max(largest, Math.min(sum, windowBytesMax)));
    }

    /** The data plane of this request: tiers for local routes, the transfer engine for peer routes. */
    private final class Ports implements TransferPorts<Records> {
        @Override
        public CreditOutcome<Records> credits(Route route) {
            long bytes = 0;
            for (RouteBlock b : route.blocks()) {
                bytes += BlockFraming.RECORD_HEADER_BYTES + b.key().key().length + b.sizeBytes();
            }
            // A peer route takes its receive credits first, before the source is asked (ROUTE-11): a full window is
            // this Manager's refusal, never a grant and pins taken at the source and then a refused READ.
            Optional<ReceiveCredits> window = route.source() instanceof RouteSource.Peer
                    ? transfer.map(PeerTransfer::receiveCredits) : Optional.empty();
            long credit = window.map(w -> creditBytes(route, w.bytesMax())).orElse(0L);
            if (window.isPresent() && !window.get().tryTake(credit)) {
                lastRefusal = AdmissionRefusal.RECEIVE_CREDITS.traceName();
                return new CreditOutcome.Refused<>(AdmissionRefusal.RECEIVE_CREDITS, "receive-credits: " + credit
                        + " bytes do not fit beside the " + window.get().heldBytes()
                        + " held of --transfer-receive-in-flight-bytes-max " + window.get().bytesMax());
            }
            if (bytes > bodyBytesMax || !budget.tryTake(bytes)) {
                window.ifPresent(w -> w.release(credit));
                responseMemory = true;
                return new CreditOutcome.Refused<>(AdmissionRefusal.RESPONSE_MEMORY, "response-memory: " + bytes
                        + " record bytes do not fit --restore-bytes-in-flight-max");
            }
            List<ByteBuf> recs = new ArrayList<>(route.blocks().size());
            boolean inPlace = sentInPlace(route);
            try {
                for (RouteBlock b : route.blocks()) {
                    int length = (int) (BlockFraming.RECORD_HEADER_BYTES + b.key().key().length
                            + (inPlace ? 0 : b.sizeBytes()));
                    ByteBuf rec = inPlace ? alloc.directBuffer(length) : recordBuffer(length);
                    recs.add(rec);
                    BlockFraming.writeHeader(rec, b.key().key(), b.sizeBytes());
                }
            } catch (RuntimeException | Error e) {
                recs.forEach(ByteBuf::release);
                budget.release(bytes);
                window.ifPresent(w -> w.release(credit));
                throw e;
            }
            Records dst = new Records(route, recs, bytes, window.orElse(null), credit);
            synchronized (destinations) {
                destinations.put(route, dst);
            }
            return new CreditOutcome.Held<>(new ReceiveCredit<>() {
                @Override
                public long bytes() {
                    return dst.bytes;
                }

                @Override
                public Records destination() {
                    return dst;
                }

                @Override
                public void release() {
                    dst.release();
                }
            });
        }

        /**
         * A record the payload is copied or READ into: an extent of the restore arena (reused memory, item 2), else
         * a direct buffer (no arena, or its free space is fragmented; counted by the arena). Either way the
         * budget above already admitted its bytes.
         */
        private ByteBuf recordBuffer(int length) {
            RestoreArena arena = tiers.restoreArena().orElse(null);
            RestoreArena.Extent extent = arena == null ? null : arena.allocate(length);
            return extent == null ? alloc.directBuffer(length) : new ArenaRecord(alloc, arena, extent);
        }

        @Override
        public GrantOutcome<Records> authorize(Route route, long deadline) {
            Records dst;
            synchronized (destinations) {
                dst = destinations.get(route);
            }
            return route.source() instanceof RouteSource.Peer p ? authorizePeer(route, p, dst) : authorizeLocal(route, dst);
        }
    }

    /**
     * Whether a route's payloads are sent from where they are stored instead of copied into the response: a local
     * DRAM route (its records then hold only their headers until {@link Records#sendInPlace}).
     */
    static boolean sentInPlace(Route route) {
        return route.source() instanceof RouteSource.Local && route.source().medium() == Medium.DRAM;
    }

    /**
     * A local route: each block pinned at exactly the planned generation and CRC32C-verified now, one pin at a
     * time; the READ is then already complete. A DRAM block is verified in the arena and its record sends it from
     * there, holding the pin until the response was written or dropped (no copy); an SSD block is copied into its
     * record and unpinned. A broken block was evicted by the tier: it is refused as not resident (the replan tries
     * the other medium or a peer) and named in the header.
     */
    private TransferPorts.GrantOutcome<Records> authorizeLocal(Route route, Records dst) {
        Medium medium = route.source().medium();
        for (int b = 0; b < route.blocks().size(); b++) {
            RouteBlock block = route.blocks().get(b);
            AdmissionRefusal refusal = switch (tiers.pin(block.key(), medium, block.sequence())) {
                case PinResult.Pinned pin -> fillLocal(dst, b, pin, medium);
                case PinResult.StaleGeneration s -> AdmissionRefusal.STALE_GENERATION;
                case PinResult.NotResident n -> AdmissionRefusal.NOT_RESIDENT;
                case PinResult.PinLimit l -> AdmissionRefusal.PINS_EXHAUSTED;
                case PinResult.Closed c -> AdmissionRefusal.SOURCE_FENCED;
            };
            if (refusal == null) {
                continue;
            }
            lastRefusal = refusal.traceName();
            return new TransferPorts.GrantOutcome.Refused<>(refusal, List.of(block.key()), "local " + medium + ": "
                    + refusal.traceName());
        }
        return new TransferPorts.GrantOutcome.Granted<>(new TransferPorts.SourceGrant<>() {
            @Override
            public TransferPorts.ReadSubmission read(Records destination) {
                destination.ready();
                CompletableFuture<TransferPorts.ReadyOutcome> ready =
                        CompletableFuture.completedFuture(new TransferPorts.ReadyOutcome.Ready());
                return submission(ready, CompletableFuture.completedFuture(null));
            }

            @Override
            public void release() {
                // copied blocks were unpinned at once; an in-place block's pin belongs to its record
            }
        });
    }

    /**
     * Fills block {@code b} of {@code dst} from {@code pin}: null when filled, else the refusal. The pin is released
     * here unless its bytes were handed to the record to be sent in place (then the record releases it).
     */
    private AdmissionRefusal fillLocal(Records dst, int b, PinResult.Pinned pin, Medium medium) {
        boolean handedOver = false;
        try {
            if (pin.sizeBytes() != dst.route.blocks().get(b).sizeBytes()) { // another generation's size: never served
                return AdmissionRefusal.STALE_GENERATION;
            }
            if (sentInPlace(dst.route)) {
                switch (tiers.verifyInPlace(pin)) {
                    case InPlace.Verified v -> {
                        dst.sendInPlace(b, v.bytes(), pin);
                        handedOver = true;
                        return null;
                    }
                    case InPlace.Corrupt c -> {
                        return corruptStored(c.reason(), c.detail(), medium);
                    }
                    case InPlace.NotInArena n -> throw new IllegalStateException(
                            "a DRAM pin's bytes are always in the arena: " + pin.key());
                }
            }
            return switch (pin.copyTo(dst.payload(b))) {
                case CopyOutcome.Copied c -> {
                    dst.filled(b, null);
                    yield null;
                }
                case CopyOutcome.Corrupt c -> corruptStored(c.reason(), c.detail(), medium);
            };
        } finally {
            if (!handedOver) {
                pin.release();
            }
        }
    }

    private AdmissionRefusal corruptStored(String reason, String detail, Medium medium) {
        LOG.warn("restore: stored block broken and evicted ({}): {}", reason, detail);
        corrupt = reason;
        corruptMedium = medium;
        return AdmissionRefusal.NOT_RESIDENT;
    }

    private static TransferPorts.ReadSubmission submission(CompletableFuture<TransferPorts.ReadyOutcome> ready,
            CompletableFuture<Void> drained) {
        return new TransferPorts.ReadSubmission() {
            @Override
            public CompletableFuture<TransferPorts.ReadyOutcome> ready() {
                return ready;
            }

            @Override
            public CompletableFuture<Void> drained() {
                return drained;
            }
        };
    }

    /** The source's refusal in the planner's terms (scope: keys, or the whole source for this request). */
    static AdmissionRefusal admission(RefusalReason r) {
        return switch (r) {
            case STALE_GENERATION -> AdmissionRefusal.STALE_GENERATION;
            case NOT_RESIDENT, BLOCK_TOO_LARGE -> AdmissionRefusal.NOT_RESIDENT;
            case PINS_EXHAUSTED, PREFETCH_LIMIT -> AdmissionRefusal.PINS_EXHAUSTED;
            case SOURCE_FENCED, SHUTTING_DOWN, SOURCE_CLOSED, STALE_SOURCE_INCARNATION, WRONG_SOURCE_INCARNATION,
                    MEMBERSHIP_SUSPENDED -> AdmissionRefusal.SOURCE_FENCED;
            default -> AdmissionRefusal.UNREACHABLE;
        };
    }

    /**
     * A peer route: one Authorize of exactly the route's blocks at their listed generations. A partial grant is
     * released at once and refused for the refused keys (the replan reads the granted ones again, never half a
     * route); a request-level refusal or failure refuses the source for this request.
     */
    private TransferPorts.GrantOutcome<Records> authorizePeer(Route route, RouteSource.Peer peer, Records dst) {
        PeerTransfer t = transfer.orElseThrow();
        Optional<Member> member = t.member(peer.owner());
        if (member.isEmpty()) {
            lastRefusal = "source-not-admitted";
            return new TransferPorts.GrantOutcome.Refused<>(AdmissionRefusal.UNREACHABLE, List.of(),
                    peer.owner() + " left the membership view");
        }
        List<BlockRef> refs = new ArrayList<>(route.blocks().size());
        for (RouteBlock b : route.blocks()) {
            refs.add(new BlockRef(b.key(), peer.medium(), b.sequence()));
        }
        long remaining = remainingMs();
        if (remaining <= 0) {
            lastRefusal = "deadline";
            return new TransferPorts.GrantOutcome.Refused<>(AdmissionRefusal.UNREACHABLE, List.of(), "deadline passed");
        }
        Duration timeout = Duration.ofMillis(Math.min(t.config().authorizeTimeoutMs(), remaining));
        AuthorizeOutcome outcome;
        try {
            outcome = t.engine().authorize(new GrantRequest(member.get(), Intent.FOREGROUND, refs, timeout))
                    .toCompletableFuture().get(timeout.toMillis() + AUTHORIZE_SLACK_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            lastRefusal = "cancelled";
            return new TransferPorts.GrantOutcome.Refused<>(AdmissionRefusal.UNREACHABLE, List.of(), "interrupted");
        } catch (Exception e) {
            lastRefusal = "unreachable";
            return new TransferPorts.GrantOutcome.Refused<>(AdmissionRefusal.UNREACHABLE, List.of(), String.valueOf(e));
        }
        outcome.load().ifPresent(this::recordLoad);
        return switch (outcome) {
            case AuthorizeOutcome.Refused r -> {
                lastRefusal = name(r.reason());
                yield new TransferPorts.GrantOutcome.Refused<>(admission(r.reason()), List.of(), r.detail());
            }
            case AuthorizeOutcome.Failed f -> {
                lastRefusal = name(f.failure());
                yield new TransferPorts.GrantOutcome.Refused<>(AdmissionRefusal.UNREACHABLE, List.of(), f.detail());
            }
            case AuthorizeOutcome.NothingGranted n -> refusedBlocks(route, n.refusals());
            case AuthorizeOutcome.Granted g -> {
                List<BlockResult> blocks = g.grant().blocks();
                if (blocks.stream().allMatch(b -> b instanceof BlockResult.Granted)) {
                    yield new TransferPorts.GrantOutcome.Granted<>(new PeerGrant(t, g.grant()));
                }
                t.engine().release(g.grant()); // nothing was READ: released at once
                yield refusedBlocks(route, blocks);
            }
        };
    }

    /**
     * Keeps the source's load summary as evidence (ROUTE-9): stamped with this Manager's receipt time by the route
     * selection, expired by receipt age, never a grant and never written to etcd. It decides nothing yet; traces
     * show its age.
     */
    private void recordLoad(SourceLoad l) {
        routes.recordLoad(new LoadSummary(l.measuredBy(), l.windowMs(), l.grantsOutstanding(), l.pinnedBytes(),
                l.egressQueuedBytes()));
    }

    /** The refused blocks of an answer, in request order, as one request-local refusal of those keys. */
    private TransferPorts.GrantOutcome<Records> refusedBlocks(Route route, List<? extends BlockResult> results) {
        List<StateKey> keys = new ArrayList<>();
        RefusalReason first = null;
        for (BlockResult result : results) {
            if (result instanceof BlockResult.Refused r) {
                keys.add(r.ref().key());
                first = first == null ? r.reason() : first;
            }
        }
        RefusalReason reason = first == null ? RefusalReason.NOT_RESIDENT : first;
        lastRefusal = name(reason);
        return new TransferPorts.GrantOutcome.Refused<>(admission(reason), keys, keys.size() + " of "
                + route.blocks().size() + " blocks refused: " + name(reason));
    }

    /**
     * A granted peer route: its blocks are READ in order, at most {@value #READS_IN_FLIGHT_PER_ROUTE} at once, each
     * straight into its record and verified by the engine (CRC32C). Ready when every block completed; a failed,
     * refused, timed-out or cancelled READ cancels the rest and ends the route as a payload failure. Drained when
     * every submitted READ terminated (the engine delivers an outcome only after the READ physically stopped).
     */
    private final class PeerGrant implements TransferPorts.SourceGrant<Records> {
        private final PeerTransfer t;
        private final Grant grant;
        private final CompletableFuture<TransferPorts.ReadyOutcome> ready = new CompletableFuture<>();
        private final CompletableFuture<Void> drained = new CompletableFuture<>();
        private final List<ReadHandle> handles = new ArrayList<>();
        private Records dst;
        private int next;
        private int inFlight;
        private long inFlightBytes;
        private int completed;
        private boolean failed;
        private boolean submitting;

        PeerGrant(PeerTransfer t, Grant grant) {
            this.t = t;
            this.grant = grant;
        }

        @Override
        public TransferPorts.ReadSubmission read(Records destination) {
            synchronized (this) {
                dst = destination;
            }
            submitMore();
            return submission(ready, drained);
        }

        private void submitMore() {
            while (true) {
                int b;
                synchronized (this) {
                    if (submitting || failed || next >= dst.records.size() || inFlight >= READS_IN_FLIGHT_PER_ROUTE
                            || inFlight > 0 && inFlightBytes + size(next) > dst.creditBytes) {
                        return;
                    }
                    submitting = true;
                    b = next++;
                    inFlight++;
                    inFlightBytes += size(b);
                }
                ReadHandle h;
                try {
                    h = t.engine().read(grant, b, Destination.of(dst.payload(b)), policy,
                            Duration.ofMillis(Math.max(1, remainingMs())));
                } catch (RuntimeException e) {
                    // The engine refused by contract violation and never started this READ: end the route as a payload
                    // failure now, so that it drains and its receive credits and response memory return (not at the
                    // request's deadline, and never charged forever).
                    synchronized (this) {
                        submitting = false;
                    }
                    outcome(b, null, e);
                    return;
                }
                synchronized (this) {
                    handles.add(h);
                    submitting = false;
                }
                h.outcome().whenComplete((o, x) -> outcome(b, o, x));
            }
        }

        private void outcome(int b, ReadResult o, Throwable x) {
            List<ReadHandle> cancel = List.of();
            boolean isReady = false;
            boolean isFailed = false;
            boolean isDrained;
            synchronized (this) {
                inFlight--;
                inFlightBytes -= size(b);
                if (x == null && o instanceof ReadResult.Completed c && !failed) {
                    dst.filled(b, c.backend());
                    completed++;
                    isReady = completed == dst.records.size();
                } else if (!failed) {
                    failed = true;
                    isFailed = true;
                    noteFailure(o, x);
                    cancel = List.copyOf(handles);
                }
                isDrained = inFlight == 0 && (failed || completed == dst.records.size()) && !submitting;
            }
            cancel.forEach(ReadHandle::cancel);
            if (isReady) {
                dst.ready();
                ready.complete(new TransferPorts.ReadyOutcome.Ready());
            }
            if (isFailed) {
                ready.complete(new TransferPorts.ReadyOutcome.PayloadFailure(failure, String.valueOf(o != null ? o : x)));
            }
            if (isDrained) {
                drained.complete(null);
            } else if (!isFailed) {
                submitMore();
            }
        }

        private void noteFailure(ReadResult o, Throwable x) {
            switch (o) {
                case ReadResult.Refused r -> {
                    failure = name(r.reason());
                    receiveCredits = switch (r.reason()) {
                        case CREDITS_EXHAUSTED, READS_IN_FLIGHT_LIMIT, CONNECTIONS_EXHAUSTED -> true;
                        default -> false;
                    };
                }
                case ReadResult.Failed f -> {
                    LOG.warn("restore: READ from {} failed ({}): {}", grant, f.reason(), f.detail());
                    failure = name(f.reason());
                }
                case ReadResult.TimedOut timedOut -> failure = "timed-out";
                case ReadResult.Cancelled cancelled -> failure = "cancelled";
                case null -> failure = "engine-error: " + x;
                default -> failure = "unexpected";
            }
        }

        private long size(int b) {
            return dst.route.blocks().get(b).sizeBytes();
        }

        @Override
        public void release() {
            t.engine().release(grant); // the engine sends it once every READ of the grant terminated
        }
    }
}
