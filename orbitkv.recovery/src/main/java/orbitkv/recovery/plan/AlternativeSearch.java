package orbitkv.recovery.plan;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import orbitkv.recovery.Prediction;

/**
 * Bounded search over complete alternatives (ROUTE-4). The window is cut into blocks at its boundaries, the
 * positions where some source's availability starts or ends (an owner or medium change): inside a block every
 * candidate source covers every key, so no other split is legal or useful. A partial alternative assigns a sampled
 * source to each block so far; consecutive blocks on one source form one route (one fixed cost). At every boundary
 * the partials are reduced to the non-dominated ones (same last source and no worse in mean, error, survival and
 * bytes), ranked by risk-adjusted time, and at most {@code perBoundaryMax} are kept. Each pricing of a partial
 * extended by one block is one evaluated alternative; when the batch budget would be exceeded the search stops and
 * reports exhaustion, and the caller keeps the fixed plan (never a half-searched best).
 */
final class AlternativeSearch {
    private AlternativeSearch() {}

    /** A (partial) alternative: a linked list of block choices back to the root. */
    static final class Partial {
        final Partial parent;
        final int source;
        final int blockFrom;
        final int blockTo;
        final double mean;
        final double error;
        final double survival;
        final int routes;
        final long bytes;
        final int order;
        final double score;

        Partial(Partial parent, int source, int blockFrom, int blockTo, double mean, double error, double survival, int routes,
                long bytes, int order) {
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
            this.score = survival == 0 ? Double.POSITIVE_INFINITY : (mean + error) / survival;
        }

        double score() {
            return score;
        }

        Prediction prediction() {
            return new Prediction(mean, error, survival);
        }

        boolean dominates(Partial q) {
            return source == q.source && routes <= q.routes && mean <= q.mean && error <= q.error && survival >= q.survival && bytes <= q.bytes;
        }
    }

    /** The search's outcome. */
    record Result(Partial best, boolean exhausted, int evaluated, int pruned) {}

    static final Comparator<Partial> RANK = Comparator.comparingDouble(Partial::score).thenComparingInt(p -> p.routes)
            .thenComparingLong(p -> p.bytes).thenComparingInt(p -> p.order);

    static Result run(EligibleWindow w, SourcePrices prices, int perBoundaryMax, int perBatchMax) {
        int[] starts = blockStarts(w);
        List<Partial> frontier = new ArrayList<>(perBoundaryMax);
        frontier.add(null); // the root: nothing chosen
        int evaluated = 0;
        int pruned = 0;
        int order = 0;
        long[] blockBytes = new long[w.sourceCount()];
        for (int b = 0; b < starts.length; b++) {
            int from = starts[b];
            int to = b + 1 < starts.length ? starts[b + 1] : w.end;
            for (int s = 0; s < w.sourceCount(); s++) { // once per block, not per partial
                blockBytes[s] = prices.sampled[s] && w.has(s, from) ? w.bytes(s, from, to) : -1;
            }
            List<Partial> next = new ArrayList<>();
            for (Partial p : frontier) {
                for (int s = 0; s < w.sourceCount(); s++) {
                    if (blockBytes[s] < 0) {
                        continue;
                    }
                    if (++evaluated > perBatchMax) {
                        return new Result(null, true, evaluated - 1, pruned);
                    }
                    next.add(extend(p, s, from, to, blockBytes[s], prices, order++));
                }
            }
            int before = next.size();
            frontier = reduce(next, perBoundaryMax);
            pruned += before - frontier.size();
            if (frontier.isEmpty()) {
                return new Result(null, false, evaluated, pruned);
            }
        }
        return new Result(frontier.get(0), false, evaluated, pruned);
    }

    private static Partial extend(Partial p, int s, int from, int to, long bytes, SourcePrices prices, int order) {
        double mean = p == null ? 0 : p.mean;
        double error = p == null ? 0 : p.error;
        double survival = p == null ? 1 : p.survival;
        int routes = p == null ? 0 : p.routes;
        long b = p == null ? 0 : p.bytes;
        mean += prices.perByte[s] * bytes;
        if (p == null || p.source != s) { // a new route: its fixed cost, error and risk
            mean += prices.fixed[s];
            error += prices.error[s];
            survival *= prices.survival[s];
            routes++;
        }
        return new Partial(p, s, from, to, mean, error, survival, routes, b + bytes, order);
    }

    /** Non-dominated partials (the earlier-generated one wins a tie), best first, at most {@code max}. */
    private static List<Partial> reduce(List<Partial> all, int max) {
        all.sort(RANK);
        List<Partial> kept = new ArrayList<>(Math.min(max, all.size()));
        for (Partial q : all) {
            boolean dominated = false;
            for (Partial p : kept) {
                if (p.dominates(q)) {
                    dominated = true;
                    break;
                }
            }
            if (!dominated) {
                kept.add(q);
                if (kept.size() == max) {
                    break;
                }
            }
        }
        return kept;
    }

    /** Block starts: the window's first index and every index where some source's availability changes. */
    static int[] blockStarts(EligibleWindow w) {
        int[] starts = new int[Math.max(1, w.end - w.from)];
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
        return Arrays.copyOf(starts, n);
    }

    /** The routes of a complete alternative as spans (consecutive blocks on one source merged). */
    static List<FixedPolicy.Span> spans(Partial last) {
        List<FixedPolicy.Span> reversed = new ArrayList<>();
        for (Partial p = last; p != null; p = p.parent) {
            if (!reversed.isEmpty() && reversed.get(reversed.size() - 1).source() == p.source) {
                FixedPolicy.Span s = reversed.remove(reversed.size() - 1);
                reversed.add(new FixedPolicy.Span(p.source, p.blockFrom, s.to()));
            } else {
                reversed.add(new FixedPolicy.Span(p.source, p.blockFrom, p.blockTo));
            }
        }
        List<FixedPolicy.Span> out = new ArrayList<>(reversed.size());
        for (int i = reversed.size() - 1; i >= 0; i--) {
            out.add(reversed.get(i));
        }
        return out;
    }
}
