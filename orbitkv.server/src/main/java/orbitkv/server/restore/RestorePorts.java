package orbitkv.server.restore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import orbitkv.inventory.Medium;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteSource;
import orbitkv.recovery.TransferPorts;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.RestoreArena;
import orbitkv.server.transfer.ReceiveCredits;

/**
 * The data plane of one restore (ROUTE-7, ROUTE-8, ROUTE-11): {@link #credits} takes a peer route's receive credits
 * and every route's record memory from the restore budget before any source is asked; {@link #authorize} hands the
 * route to its port ({@link LocalRoutePort} for the tiers, {@link PeerRoutePort} for a peer's Authorize and READs).
 * Every destination it created is remembered until the restore ends, so that an undelivered one is freed.
 */
final class RestorePorts implements TransferPorts<RestoreRecords> {
    private final LocalTiers tiers;
    private final Optional<RestoreTransfer> transfer;
    private final ByteBufAllocator alloc;
    private final CopyOutBudget budget;
    private final long bodyBytesMax;
    private final RestoreNotes notes;
    private final LocalRoutePort local;
    private final Optional<PeerRoutePort> peer;
    private final RestoreStages stages;
    /** Every destination this request created, by route (identity: the executor hands back the same Route). */
    private final Map<Route, RestoreRecords> destinations = new IdentityHashMap<>();

    RestorePorts(LocalTiers tiers, Optional<RestoreTransfer> transfer, ByteBufAllocator alloc, long bodyBytesMax,
            RestoreNotes notes, LocalRoutePort local, Optional<PeerRoutePort> peer, RestoreStages stages) {
        this.tiers = tiers;
        this.transfer = transfer;
        this.alloc = alloc;
        this.budget = tiers.copyOut();
        this.bodyBytesMax = bodyBytesMax;
        this.notes = notes;
        this.local = local;
        this.peer = peer;
        this.stages = stages;
    }

    /**
     * The receive credits of a peer route: the bytes its READs may have in flight at once (its {@code readsPerRoute}
     * largest blocks), at most the whole window; {@link PeerReads} submits within them. Never less than the largest
     * block, which the configuration keeps within the window.
     */
    static long creditBytes(Route route, long windowBytesMax, int readsPerRoute) {
        long[] sizes = route.blocks().stream().mapToLong(RouteBlock::sizeBytes).sorted().toArray();
        long sum = 0;
        for (int i = sizes.length - 1; i >= 0 && i >= sizes.length - readsPerRoute; i--) {
            sum += sizes[i];
        }
        long largest = sizes.length == 0 ? 0 : sizes[sizes.length - 1];
        return Math.max(1, Math.max(largest, Math.min(sum, windowBytesMax)));
    }

    private static long largestBlock(Route route) {
        long max = 1;
        for (RouteBlock b : route.blocks()) {
            max = Math.max(max, b.sizeBytes());
        }
        return max;
    }

    /**
     * Whether a route's payloads are sent from where they are stored instead of copied into the response: a local
     * DRAM route (its records then hold only their headers until {@link RestoreRecords#sendInPlace}).
     */
    static boolean sentInPlace(Route route) {
        return route.source() instanceof RouteSource.Local && route.source().medium() == Medium.DRAM;
    }

    @Override
    public CreditOutcome<RestoreRecords> credits(Route route) {
        long asked = stages.portCalled();
        try {
            return take(route);
        } finally {
            stages.credited(asked);
        }
    }

    /** The route's receive credits (a peer's), node room and record memory, in that order; all or nothing. */
    private CreditOutcome<RestoreRecords> take(Route route) {
        long bytes = 0;
        for (RouteBlock b : route.blocks()) {
            bytes += RecordHeader.recordBytes(b.key().key().length, b.sizeBytes());
        }
        // A peer route takes its receive credits first, before the source is asked (ROUTE-11): a full window is
        // this Manager's refusal, never a grant and pins taken at the source and then a refused READ.
        Optional<ReceiveCredits> window = route.source() instanceof RouteSource.Peer
                ? transfer.map(RestoreTransfer::receiveCredits) : Optional.empty();
        long credit = window.map(w -> creditBytes(route, w.bytesMax(), transfer.orElseThrow().readsInFlightPerRoute()))
                .orElse(0L);
        if (window.isPresent() && !window.get().tryTake(credit)) {
            notes.refusal(AdmissionRefusal.RECEIVE_CREDITS.traceName());
            return new CreditOutcome.Refused<>(AdmissionRefusal.RECEIVE_CREDITS, "receive-credits: "
                    + window.get().refusalDetail(credit));
        }
        // issue 39: the node window must have room for the route's largest READ now; its READs are charged one by one
        Optional<AdmissionOutcome.Refused> node = window.isEmpty() ? Optional.empty()
                : transfer.orElseThrow().admission().flatMap(a -> a.managerReadRoom(largestBlock(route)));
        if (node.isPresent()) {
            window.get().release(credit);
            notes.refusal(AdmissionRefusal.RECEIVE_CREDITS.traceName());
            return new CreditOutcome.Refused<>(AdmissionRefusal.RECEIVE_CREDITS, "receive-credits: node admission refused "
                    + largestBlock(route) + " bytes: " + node.get().detail());
        }
        if (bytes > bodyBytesMax || !budget.tryTake(bytes)) {
            window.ifPresent(w -> w.release(credit));
            notes.responseMemory();
            return new CreditOutcome.Refused<>(AdmissionRefusal.RESPONSE_MEMORY, "response-memory: " + bytes
                    + " record bytes do not fit --restore-bytes-in-flight-max");
        }
        RestoreRecords dst = new RestoreRecords(route, records(route, bytes, window, credit), bytes,
                window.orElse(null), credit, alloc, budget);
        synchronized (destinations) {
            destinations.put(route, dst);
        }
        return new CreditOutcome.Held<>(new ReceiveCredit<>() {
            @Override
            public long bytes() {
                return dst.bytes;
            }

            @Override
            public RestoreRecords destination() {
                return dst;
            }

            @Override
            public void release() {
                dst.release();
            }
        });
    }

    /** The route's records, headers written; on failure everything taken for the route is returned. */
    private List<ByteBuf> records(Route route, long bytes, Optional<ReceiveCredits> window, long credit) {
        List<ByteBuf> recs = new ArrayList<>(route.blocks().size());
        boolean inPlace = sentInPlace(route);
        try {
            for (RouteBlock b : route.blocks()) {
                int length = (int) RecordHeader.recordBytes(b.key().key().length, inPlace ? 0 : b.sizeBytes());
                ByteBuf rec = inPlace ? alloc.directBuffer(length) : recordBuffer(length);
                recs.add(rec);
                RecordHeader.write(rec, b.key().key(), b.sizeBytes());
            }
            return recs;
        } catch (RuntimeException | Error e) {
            recs.forEach(ByteBuf::release);
            budget.release(bytes);
            window.ifPresent(w -> w.release(credit));
            throw e;
        }
    }

    /**
     * A record the payload is copied or READ into: an extent of the restore arena (reused memory), else a direct
     * buffer (no arena, or its free space is fragmented; counted by the arena). Either way the budget already
     * admitted its bytes.
     */
    private ByteBuf recordBuffer(int length) {
        RestoreArena arena = tiers.restoreArena().orElse(null);
        RestoreArena.Extent extent = arena == null ? null : arena.allocate(length);
        return extent == null ? alloc.directBuffer(length) : new ArenaRecord(alloc, arena, extent);
    }

    @Override
    public GrantOutcome<RestoreRecords> authorize(Route route, long deadline) {
        RestoreRecords dst;
        synchronized (destinations) {
            dst = destinations.get(route);
        }
        return route.source() instanceof RouteSource.Peer p ? peer.orElseThrow().authorize(route, p)
                : local.authorize(route, dst);
    }

    /** Every destination not in {@code delivered} is freed now if released, else when its drain releases it. */
    void abandonAll(java.util.Set<RestoreRecords> delivered) {
        List<RestoreRecords> all;
        synchronized (destinations) {
            all = List.copyOf(destinations.values());
        }
        for (RestoreRecords rec : all) {
            if (!delivered.contains(rec)) {
                rec.abandon();
            }
        }
    }
}
