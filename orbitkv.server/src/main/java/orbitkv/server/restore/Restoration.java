package orbitkv.server.restore;

import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import orbitkv.index.Replica;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.Demand;
import orbitkv.recovery.LaneHeadroom;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.Restore;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.Residence;
import orbitkv.transfer.BackendPolicy;

/**
 * One restore through the recovery planner (DESIGN §8 "Complete recovery route selection"): the demand (the
 * request's keys in chain order, HostReady, its deadline, the record bytes it may hold), the evidence
 * ({@link RestoreEvidence}), the planner's choice (the fixed policy: longest legal span, local before peer, DRAM
 * before SSD, owner order; or, in COST_DRIVEN mode, a switch earned by executed observations), and its execution
 * through {@link RestorePorts}: receive credits and the destination first, then the source's authorization (a local
 * pin of the exact generation, or a peer's Authorize), then the READ; at most {@code --route-replans-max} replans
 * after a pre-submission refusal, on request-local evidence only (ROUTE-7); after submission a route keeps its grant
 * and credits until drain, and a payload failure ends the prefix without a retry (ROUTE-8). The answer is a
 * {@link RestoreResult}; how it is sent is the caller's business.
 */
public final class Restoration {
    private final LocalTiers tiers;
    private final RouteSelection routes;
    private final RestoreRequest req;
    private final IndexEvidence index;
    private final Optional<RestoreTransfer> transfer;
    private final long bodyBytesMax;
    private final CopyOutBudget budget;
    private final long deadlineNanos;
    private final RestoreNotes notes = new RestoreNotes();
    private final RestorePorts ports;
    private final RestoreStages stages;
    private Speculation speculation;

    /**
     * @param bodyBytesMax bound on the record bytes one restore delivers at once
     */
    public Restoration(LocalTiers tiers, RestoreView view, RouteSelection routes, long bodyBytesMax,
            ByteBufAllocator alloc, RestoreRequest req) {
        RestoreStages stages = RestoreStages.begin(); // the evidence lookup is the restore's first stage
        IndexEvidence evidence = view.evidence(req.namespace(), req.keys());
        stages.evidenced();
        this(tiers, evidence, view.transfer(), routes, bodyBytesMax, alloc, req,
                System.nanoTime() + req.deadlineMs() * 1_000_000L, stages);
    }

    /** One restore of {@code req} on given evidence by {@code deadlineNanos} (a window of a streamed restore). */
    Restoration(LocalTiers tiers, IndexEvidence index, Optional<RestoreTransfer> transfer, RouteSelection routes,
            long bodyBytesMax, ByteBufAllocator alloc, RestoreRequest req, long deadlineNanos) {
        this(tiers, index, transfer, routes, bodyBytesMax, alloc, req, deadlineNanos, RestoreStages.begin());
    }

    private Restoration(LocalTiers tiers, IndexEvidence index, Optional<RestoreTransfer> transfer,
            RouteSelection routes, long bodyBytesMax, ByteBufAllocator alloc, RestoreRequest req, long deadlineNanos,
            RestoreStages stages) {
        this.tiers = tiers;
        this.routes = routes;
        this.req = req;
        this.index = index;
        this.transfer = transfer;
        this.bodyBytesMax = bodyBytesMax;
        this.budget = tiers.copyOut();
        this.deadlineNanos = deadlineNanos;
        this.stages = stages;
        BackendPolicy policy = req.backend().orElseGet(() -> transfer.map(RestoreTransfer::defaultBackend)
                .orElse(BackendPolicy.SHARED_MEMORY_PREFERRED));
        Optional<PeerRoutePort> peer = transfer.map(t -> new PeerRoutePort(t, routes, notes, policy, this::remainingMs,
                stages));
        this.ports = new RestorePorts(tiers, transfer, alloc, bodyBytesMax, notes, new LocalRoutePort(tiers, notes),
                peer, stages);
    }

    /** Framing bytes of every record of the demand (the payload capacity is the body bound minus these). */
    private static long framingBytes(List<StateKey> keys) {
        long f = 0;
        for (StateKey k : keys) {
            f += RecordHeader.recordBytes(k.key().length, 0);
        }
        return f;
    }

    /**
     * The demand of a restore: HostReady by the request's deadline; its payload capacity is the smaller of the body
     * bound and the restore memory still free, minus the framing of every record.
     */
    private Demand demand() {
        long room = Math.min(bodyBytesMax, budget.bytesMax() - budget.heldBytes());
        Demand d = Demand.hostReady(req.namespace(), req.keys(), deadlineNanos)
                .withDestinationBytesMax(Math.max(0, room - framingBytes(req.keys())));
        // issue 39 item 6 (ROUTE-3): the admission headroom of the rx lane peer routes charge, when there is one. A
        // route needs room for its largest READ before its authorization (RestorePorts); its READs then charge one by
        // one and wait in deadline order, so the model's need is one READ (routeReadsInFlight 1)
        return transfer.flatMap(t -> tiers.admission().flatMap(a -> a.managerReadLane().flatMap(
                lane -> LaneHeadroom.of(a.status(), lane, 1)))).map(d::withNetwork).orElse(d);
    }

    /**
     * This restore is demand traffic of {@code s} (new speculation waits until it ended, ROUTE-13) and reports its
     * delivered routes to it: prefetched blocks served locally are used; with {@code store_local}, peer blocks are
     * offered to retention (ROUTE-12).
     */
    public Restoration with(Speculation s) {
        this.speculation = s;
        return this;
    }

    /** Runs the restore: the delivered records in request order, the served blocks, the named stop, the trace. */
    public RestoreResult run() {
        if (speculation == null) {
            return execute();
        }
        speculation.demandBegins();
        try {
            return execute();
        } finally {
            speculation.demandEnds();
        }
    }

    private RestoreResult execute() {
        Restore<RestoreRecords> r;
        try {
            r = routes.restore(demand(), RestoreEvidence.of(tiers, req.keys(), index, transfer), ports);
        } catch (RuntimeException | Error e) {
            ports.abandonAll(Set.of());
            throw e;
        }
        stages.plannerReturned();
        List<RestoreResult.DeliveredRoute> out = new ArrayList<>(r.delivered().size());
        List<RouteHeader.Served> served = new ArrayList<>(r.restoredKeys());
        Set<RestoreRecords> delivered = Collections.newSetFromMap(new IdentityHashMap<>());
        try {
            for (Restore.Delivered<RestoreRecords> d : r.delivered()) {
                RestoreRecords rec = d.destination();
                rec.deliver();
                delivered.add(rec);
                List<RouteHeader.Served> routeServed = new ArrayList<>(rec.records.size());
                for (int b = 0; b < rec.records.size(); b++) {
                    routeServed.add(new RouteHeader.Served(rec.route.kind().traceName(),
                            RouteHeader.owner(rec.route.source()), rec.backends[b], rec.route.blocks().get(b).sizeBytes()));
                }
                out.add(new RestoreResult.DeliveredRoute(rec.records, rec.bytes, routeServed));
                served.addAll(routeServed);
                if (speculation != null) {
                    speculation.delivered(rec, req.storeLocal()); // ROUTE-12, ROUTE-13: never changes the answer
                }
            }
        } catch (RuntimeException | Error e) {
            out.forEach(d -> d.release(budget)); // delivered to no one: freed here
            ports.abandonAll(delivered);
            throw e;
        }
        ports.abandonAll(delivered);
        if (r.stop() == PrefixStop.DESTINATION_CAPACITY && r.restoredKeys() < req.keys().size()) {
            countResponseMemory(r.restoredKeys());
        }
        RestoreResult result = new RestoreResult(out, r.restoredKeys(), notes.stop(r.stop()), served,
                r.trace().header(), budget);
        stages.assembled(out.size(), r.restoredKeys(), served);
        return result;
    }

    /**
     * The capacity stop is named {@code response-memory} when the restore memory, not the body bound, kept the next
     * record out; the budget counts that refusal (its metric) by being asked for the record once.
     */
    private void countResponseMemory(int next) {
        long record = nextRecordBytes(next);
        if (budget.tryTake(record)) {
            budget.release(record); // freed meanwhile: the body bound or the planner's framing margin stopped it
        } else {
            notes.responseMemory();
        }
    }

    /** The record bytes of key {@code next} by its evidence: a local residence, else a remote replica, else 0. */
    private long nextRecordBytes(int next) {
        StateKey key = req.keys().get(next);
        long size = tiers.residences(key).stream().mapToLong(Residence::sizeBytes).findFirst()
                .orElse(index.replicas().get(next).stream().mapToLong(Replica::sizeBytes).findFirst().orElse(0));
        return RecordHeader.recordBytes(key.key().length, size);
    }

    private long remainingMs() {
        return Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000L);
    }
}
