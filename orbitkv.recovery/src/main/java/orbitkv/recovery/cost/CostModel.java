package orbitkv.recovery.cost;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.membership.NodeId;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.RouteClass;

/**
 * The shared cost model (ROUTE-3, ROUTE-6): one bounded {@link ClassWindow} per (route kind, peer node), fed
 * only with {@link Observation}s, which only executed routes produce. Bounds (INV-9): {@code windowMax}
 * observations per class (oldest evicted, counted) and {@code peersMax} peer nodes (the least recently observed
 * peer and all its classes evicted, counted). Local classes are never evicted (there are two).
 */
public final class CostModel {
    private final int windowMax;
    private final int peersMax;
    private final double errorQuantile;
    private final ConcurrentHashMap<RouteClass, ClassWindow> windows = new ConcurrentHashMap<>();
    /** Peer node -> last observation time; guarded by {@code this}. */
    private final Map<NodeId, Long> peerLastSeen = new HashMap<>();
    private final LongAdder observationsEvicted = new LongAdder();
    private final LongAdder peersEvicted = new LongAdder();

    public CostModel(int windowMax, int peersMax, double errorQuantile) {
        if (windowMax < 1 || peersMax < 1 || !(errorQuantile > 0 && errorQuantile <= 1)) {
            throw new IllegalArgumentException("bad cost model bounds: " + windowMax + ", " + peersMax + ", " + errorQuantile);
        }
        this.windowMax = windowMax;
        this.peersMax = peersMax;
        this.errorQuantile = errorQuantile;
    }

    /** Records one executed route's observation. */
    public void record(Observation o) {
        RouteClass c = o.routeClass();
        ClassWindow w = windows.get(c);
        if (w == null || c.peer().isPresent()) {
            w = admit(c, o.atNanos());
        }
        if (w.record(o)) {
            observationsEvicted.increment();
        }
    }

    /** The window of {@code c}, created when absent; for a peer class, refreshes its peer and enforces the peer bound. */
    private synchronized ClassWindow admit(RouteClass c, long atNanos) {
        if (c.peer().isPresent()) {
            NodeId peer = c.peer().get();
            if (!peerLastSeen.containsKey(peer) && peerLastSeen.size() >= peersMax) {
                evictLeastRecentPeer();
            }
            peerLastSeen.put(peer, atNanos);
        }
        return windows.computeIfAbsent(c, k -> new ClassWindow(k, windowMax, errorQuantile));
    }

    private void evictLeastRecentPeer() {
        NodeId oldest = null;
        long oldestAt = 0;
        for (Map.Entry<NodeId, Long> e : peerLastSeen.entrySet()) {
            if (oldest == null || e.getValue() - oldestAt < 0
                    || (e.getValue() == oldestAt && e.getKey().compareTo(oldest) < 0)) {
                oldest = e.getKey();
                oldestAt = e.getValue();
            }
        }
        peerLastSeen.remove(oldest);
        for (Iterator<RouteClass> it = windows.keySet().iterator(); it.hasNext(); ) {
            RouteClass c = it.next();
            if (c.peer().isPresent() && c.peer().get().equals(oldest)) {
                it.remove();
            }
        }
        peersEvicted.increment();
    }

    /** The class's current estimate, or null when it has no observation. */
    public CostEstimate estimate(RouteClass c) {
        ClassWindow w = windows.get(c);
        return w == null ? null : w.estimate();
    }

    /** All estimates, ordered by class. */
    public List<CostEstimate> estimates() {
        List<CostEstimate> out = new ArrayList<>();
        for (ClassWindow w : windows.values()) {
            CostEstimate e = w.estimate();
            if (e != null) {
                out.add(e);
            }
        }
        out.sort((a, b) -> a.routeClass().compareTo(b.routeClass()));
        return out;
    }

    public long observationsEvicted() {
        return observationsEvicted.sum();
    }

    public long peersEvicted() {
        return peersEvicted.sum();
    }

    /** Peer nodes currently tracked. */
    public synchronized int peersTracked() {
        return peerLastSeen.size();
    }
}
