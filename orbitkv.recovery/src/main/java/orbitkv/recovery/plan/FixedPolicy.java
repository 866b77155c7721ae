package orbitkv.recovery.plan;

/**
 * The fixed deterministic policy (ROUTE-4, ROUTE-6; DESIGN §8): maximal coverage (the whole eligible window),
 * then at each position the source whose run from there is longest (the longest legal span, which also gives the
 * fewest routes), ties by route kind (local before peer, DRAM before SSD), then fresh before stale, then owner
 * (node id, epoch, incarnation id). Sources arrive sorted by kind then owner, so the result never depends on the
 * order of the evidence.
 */
final class FixedPolicy {
    private FixedPolicy() {}

    /** Writes the fixed plan of {@code w} into {@code out} (cleared first). */
    static void spans(EligibleWindow w, Spans out) {
        out.clear();
        int at = w.from;
        while (at < w.end) {
            int best = -1;
            int bestReach = -1;
            for (int s = 0; s < w.sourceCount(); s++) {
                if (!w.has(s, at)) {
                    continue;
                }
                int reach = w.reach(s, at);
                if (best < 0 || reach > bestReach || (reach == bestReach && preferAtEqualSpan(w, s, best, at))) {
                    best = s;
                    bestReach = reach;
                }
            }
            out.add(best, at, bestReach);
            at = bestReach;
        }
    }

    /** {@code s} comes after {@code best} in source order; it wins an equal span only as a fresh replica of the same kind. */
    private static boolean preferAtEqualSpan(EligibleWindow w, int s, int best, int at) {
        return w.source(s).kind() == w.source(best).kind() && w.stale(best, at) && !w.stale(s, at);
    }
}
