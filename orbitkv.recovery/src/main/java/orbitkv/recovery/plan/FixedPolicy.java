package orbitkv.recovery.plan;

import java.util.ArrayList;
import java.util.List;

/**
 * The fixed deterministic policy (ROUTE-4, ROUTE-6; DESIGN §8): maximal coverage (the whole eligible window),
 * then at each position the source whose run from there is longest (the longest legal span, which also gives the
 * fewest routes), ties by route kind (local before peer, DRAM before SSD), then fresh before stale, then owner
 * (node id, epoch, incarnation id). Sources arrive sorted by kind then owner, so the result never depends on the
 * order of the evidence.
 */
final class FixedPolicy {
    private FixedPolicy() {}

    /** A span: {@code source} over demand indexes [from, to). */
    record Span(int source, int from, int to) {}

    static List<Span> spans(EligibleWindow w) {
        List<Span> out = new ArrayList<>();
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
            out.add(new Span(best, at, bestReach));
            at = bestReach;
        }
        return out;
    }

    /** {@code s} comes after {@code best} in source order; it wins an equal span only as a fresh replica of the same kind. */
    private static boolean preferAtEqualSpan(EligibleWindow w, int s, int best, int at) {
        return w.sources[s].kind() == w.sources[best].kind() && w.stale(best, at) && !w.stale(s, at);
    }
}
