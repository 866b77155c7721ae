package orbitkv.recovery.plan;

import java.util.Arrays;
import orbitkv.recovery.Demand;

/**
 * Bounded search over complete alternatives (ROUTE-4). The window is cut into blocks at its boundaries, the
 * positions where some source's availability starts or ends (an owner or medium change): inside a block every
 * candidate source covers every key, so no other split is legal or useful. A partial alternative assigns a sampled
 * source to each block so far; consecutive blocks on one source form one route (one fixed cost). At every boundary
 * the partials are reduced to the non-dominated ones (same last source and no worse in mean, error, survival and
 * bytes), ranked by risk-adjusted time, and at most {@code perBoundaryMax} are kept. Each pricing of a partial
 * extended by one block is one evaluated alternative; when the batch budget would be exceeded the search stops and
 * reports exhaustion, and the caller keeps the fixed plan (never a half-searched best).
 *
 * <p>Reused: one search lives in one {@link PlanScratch}. Partials come from a pool of at most
 * {@code perBatchMax} objects (one per evaluated alternative, the batch bound), made on first use and rewritten by
 * every later run, so a run allocates nothing once the pool has grown to the largest batch seen. A partial is valid
 * only until the next {@link #run}. Not thread-safe: its owner is the thread holding the scratch.
 */
final class AlternativeSearch {
    /** A (partial) alternative: a linked list of block choices back to the root (null). Pooled and rewritten. */
    static final class Partial {
        Partial parent;
        int source;
        int blockFrom;
        int blockTo;
        double mean;
        double error;
        double survival;
        int routes;
        long bytes;
        int order;
        double score;
        /** The first key of the last route (its lane need grows with it: issue 39 item 6). */
        int routeFrom;

        void set(Partial parent, int source, int blockFrom, int blockTo, double mean, double error, double survival,
                int routes, long bytes, int order, int routeFrom) {
            this.routeFrom = routeFrom;
            this.parent = parent;
            this.source = source;
            this.blockFrom = blockFrom;
            this.blockTo = blockTo;
            this.mean = mean;
            this.error = error;
            this.survival = survival;
            this.routes = routes;
            this.bytes = bytes;
            this.order = order;
            this.score = Planner.riskAdjusted(mean, error, survival);
        }

        boolean dominates(Partial q) {
            return source == q.source && routes <= q.routes && mean <= q.mean && error <= q.error && survival >= q.survival && bytes <= q.bytes
                    && routeFrom >= q.routeFrom;
        }

        /** The rank order: risk-adjusted time, then fewer routes, fewer bytes, earlier generated (a total order). */
        boolean ranksBefore(Partial q) {
            int c = Double.compare(score, q.score);
            if (c != 0) {
                return c < 0;
            }
            if (routes != q.routes) {
                return routes < q.routes;
            }
            if (bytes != q.bytes) {
                return bytes < q.bytes;
            }
            return order < q.order;
        }
    }

    private final int perBoundaryMax;
    private final int perBatchMax;
    /** Partials handed out by this run: {@code pool[0, used)}. */
    private final Partial[] pool;
    private int used;
    /** One boundary's extensions (at most the batch bound), reordered as a heap by {@link #reduce}. */
    private final Partial[] next;
    private final Partial[] frontier;
    private int frontierSize;
    private final int[] starts = new int[Demand.KEYS_MAX];
    private long[] blockBytes = new long[8];

    // the outcome of the last run
    /** The best complete alternative, or null (exhausted, or no sampled source covers some block). */
    Partial best;
    boolean exhausted;
    int evaluated;
    int pruned;

    AlternativeSearch(int perBoundaryMax, int perBatchMax) {
        this.perBoundaryMax = perBoundaryMax;
        this.perBatchMax = perBatchMax;
        this.pool = new Partial[perBatchMax];
        this.next = new Partial[perBatchMax];
        this.frontier = new Partial[Math.max(1, perBoundaryMax)];
    }

    void run(EligibleWindow w, SourcePrices prices) {
        int blocks = blockStarts(w);
        used = 0;
        best = null;
        exhausted = false;
        evaluated = 0;
        pruned = 0;
        frontier[0] = null; // the root: nothing chosen
        frontierSize = 1;
        int order = 0;
        int sources = w.sourceCount();
        if (blockBytes.length < sources) {
            blockBytes = new long[Math.max(sources, blockBytes.length * 2)];
        }
        for (int b = 0; b < blocks; b++) {
            int from = starts[b];
            int to = b + 1 < blocks ? starts[b + 1] : w.end;
            for (int s = 0; s < sources; s++) { // once per block, not per partial
                blockBytes[s] = prices.sampled[s] && w.has(s, from) ? w.bytes(s, from, to) : -1;
            }
            int n = 0;
            for (int f = 0; f < frontierSize; f++) {
                Partial p = frontier[f];
                for (int s = 0; s < sources; s++) {
                    if (blockBytes[s] < 0) {
                        continue;
                    }
                    if (evaluated == perBatchMax) {
                        exhausted = true;
                        clearFrontier();
                        return;
                    }
                    evaluated++;
                    next[n++] = extend(w, p, s, from, to, blockBytes[s], prices, order++);
                }
            }
            reduce(n);
            pruned += n - frontierSize;
            if (frontierSize == 0) {
                return;
            }
        }
        best = frontier[0];
        clearFrontier();
    }

    private void clearFrontier() {
        Arrays.fill(frontier, 0, frontierSize, null);
        frontierSize = 0;
    }

    private Partial extend(EligibleWindow w, Partial p, int s, int from, int to, long bytes, SourcePrices prices,
            int order) {
        double mean = p == null ? 0 : p.mean;
        double error = p == null ? 0 : p.error;
        double survival = p == null ? 1 : p.survival;
        int routes = p == null ? 0 : p.routes;
        long b = p == null ? 0 : p.bytes;
        mean += prices.perByte[s] * bytes;
        boolean newRoute = p == null || p.source != s;
        if (newRoute) { // a new route: its fixed cost, error and risk
            mean += prices.fixed[s];
            error += prices.error[s];
            survival *= prices.survival[s];
            routes++;
        }
        int routeFrom = newRoute ? from : p.routeFrom;
        if (prices.blocked(w, s, routeFrom, to)) { // beyond its lane's headroom: predicted refused (ROUTE-3)
            survival = 0;
        }
        Partial q = pool[used];
        if (q == null) {
            q = pool[used] = new Partial();
        }
        used++;
        q.set(p, s, from, to, mean, error, survival, routes, b + bytes, order, routeFrom);
        return q;
    }

    /**
     * The non-dominated partials of {@code next[0, n)} (the earlier-generated one wins a tie), best first, at most
     * {@code perBoundaryMax}, into the frontier. {@code next} becomes a binary min-heap in rank order and is popped
     * only until the frontier is full: O(n + kept log n), no allocation.
     */
    private void reduce(int n) {
        for (int i = n / 2 - 1; i >= 0; i--) {
            siftDown(i, n);
        }
        frontierSize = 0;
        int left = n;
        while (left > 0 && frontierSize < perBoundaryMax) {
            Partial q = next[0];
            next[0] = next[--left];
            siftDown(0, left);
            boolean dominated = false;
            for (int k = 0; k < frontierSize; k++) {
                if (frontier[k].dominates(q)) {
                    dominated = true;
                    break;
                }
            }
            if (!dominated) {
                frontier[frontierSize++] = q;
            }
        }
        Arrays.fill(next, 0, n, null);
    }

    private void siftDown(int i, int n) {
        Partial x = next[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= n) {
                break;
            }
            if (c + 1 < n && next[c + 1].ranksBefore(next[c])) {
                c++;
            }
            if (!next[c].ranksBefore(x)) {
                break;
            }
            next[i] = next[c];
            i = c;
        }
        next[i] = x;
    }

    /** Block starts into {@link #starts}: the window's first index and every index where some source's availability changes. */
    private int blockStarts(EligibleWindow w) {
        int n = 0;
        starts[n++] = w.from;
        for (int i = w.from + 1; i < w.end; i++) {
            for (int s = 0; s < w.sourceCount(); s++) {
                if (w.has(s, i) != w.has(s, i - 1)) {
                    starts[n++] = i;
                    break;
                }
            }
        }
        return n;
    }

    /** The routes of the complete alternative {@code last} as spans (consecutive blocks on one source merged), into {@code out}. */
    static void spans(Partial last, Spans out) {
        int n = 0;
        for (Partial p = last; p != null; p = p.parent) {
            if (p.parent == null || p.parent.source != p.source) {
                n++;
            }
        }
        out.resize(n);
        int i = n - 1;
        int to = -1;
        for (Partial p = last; p != null; p = p.parent) {
            if (to < 0) {
                to = p.blockTo;
            }
            if (p.parent == null || p.parent.source != p.source) { // p starts its route
                out.set(i--, p.source, p.blockFrom, to);
                to = -1;
            }
        }
    }

    /** Forgets the last run's outcome (the pooled partials only ever point at each other). */
    void release() {
        used = 0;
        best = null;
    }
}
