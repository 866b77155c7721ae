package orbitkv.recovery.plan;

import java.util.Arrays;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.membership.Incarnation;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RouteSource;

/**
 * The eligible replicas of the demand from {@code from} up to the first key without one (ROUTE-1, ROUTE-2,
 * IDX-14), as a table source x key. A replica is eligible iff its route kind has a qualified path, it is not a
 * stale hint (unless the demand allows them) and this request has not excluded it. Sources are distinct
 * (owner, medium) pairs sorted by {@link RouteSource#ORDER}; when the evidence lists one source twice for a key
 * the higher sequence (then the larger size) is kept, so the table never depends on the evidence's order.
 * Rows are primitive arrays (a sequence of 0 = absent): the planner allocates route blocks only for chosen routes.
 */
final class EligibleWindow {
    final int from;
    /** Demand index just past the last eligible key. */
    int end;
    /** Why the window ends at {@link #end}. */
    PrefixStop stop;
    final RouteSource[] sources;
    private final Demand demand;
    /** [source][key - from]: residency sequence, 0 when the source has no eligible replica of the key. */
    private final long[][] seq;
    private final long[][] size;
    private final boolean[][] stale;
    /** [source][key - from]: demand index past the end of the source's run starting here (or key if absent). */
    private final int[][] runEnd;

    private EligibleWindow(Demand demand, int from, int end, PrefixStop stop, RouteSource[] sources, long[][] seq, long[][] size,
            boolean[][] stale) {
        this.demand = demand;
        this.from = from;
        this.end = end;
        this.stop = stop;
        this.sources = sources;
        this.seq = seq;
        this.size = size;
        this.stale = stale;
        this.runEnd = new int[sources.length][];
        for (int s = 0; s < sources.length; s++) {
            int[] r = new int[end - from];
            int reach = end;
            for (int i = end - 1; i >= from; i--) {
                if (seq[s][i - from] == 0) {
                    reach = i;
                    r[i - from] = i;
                } else {
                    r[i - from] = reach;
                }
            }
            runEnd[s] = r;
        }
    }

    int sourceCount() {
        return sources.length;
    }

    boolean has(int source, int key) {
        return seq[source][key - from] != 0;
    }

    boolean stale(int source, int key) {
        return stale[source][key - from];
    }

    long size(int source, int key) {
        return size[source][key - from];
    }

    RouteBlock block(int source, int key) {
        int i = key - from;
        return new RouteBlock(demand.keys().get(key), seq[source][i], size[source][i], stale[source][i]);
    }

    /** End of {@code source}'s run from {@code key}, clipped to {@link #end}. */
    int reach(int source, int key) {
        return Math.min(runEnd[source][key - from], end);
    }

    /** Payload bytes of {@code source}'s blocks over [a, b) (all present). */
    long bytes(int source, int a, int b) {
        long sum = 0;
        long[] row = size[source];
        for (int i = a; i < b; i++) {
            sum += row[i - from];
        }
        return sum;
    }

    /** Builds the window; {@link #end} may equal {@code from} (an empty prefix, with its reason). */
    static EligibleWindow build(Demand demand, Evidence evidence, int from, Exclusions exclusions) {
        Builder b = new Builder(demand, evidence, from, exclusions);
        int n = demand.keys().size();
        int end = from;
        PrefixStop stop = PrefixStop.COMPLETE;
        for (int i = from; i < n; i++) {
            PrefixStop why = b.collect(evidence.keys().get(i), i - from);
            if (why != null) {
                stop = why;
                break;
            }
            end = i + 1;
        }
        return b.finish(end, stop);
    }

    /** Collects rows per source, found in evidence order, then sorts the sources into the policy's order. */
    private static final class Builder {
        private final Demand demand;
        private final Evidence evidence;
        private final int from;
        private final int width;
        private final Exclusions exclusions;
        private final boolean[] qualified = new boolean[RouteKind.values().length];
        private RouteSource[] found = new RouteSource[8];
        private long[][] seq = new long[8][];
        private long[][] size = new long[8][];
        private boolean[][] stale = new boolean[8][];
        private int count;
        private final int[] hint = new int[KeyEvidence.REMOTE_REPLICAS_MAX];

        Builder(Demand demand, Evidence evidence, int from, Exclusions exclusions) {
            this.demand = demand;
            this.evidence = evidence;
            this.from = from;
            this.width = demand.keys().size() - from;
            this.exclusions = exclusions;
            for (RouteKind k : evidence.qualifiedKinds()) {
                qualified[k.ordinal()] = true;
            }
            Arrays.fill(hint, -1);
        }

        /** Adds key {@code at}'s eligible replicas; returns null, or why it has none. */
        PrefixStop collect(KeyEvidence k, int at) {
            boolean any = false;
            boolean rejected = false;
            boolean unqualified = false;
            boolean staleOnly = false;
            boolean checkExclusions = !exclusions.isEmpty();
            for (LocalResidence r : k.local()) {
                if (!qualified[RouteKind.of(true, r.medium()).ordinal()]) {
                    unqualified = true;
                    continue;
                }
                int s = source(null, r.medium());
                if (checkExclusions && exclusions.excludes(found[s], k.key())) {
                    rejected = true;
                    continue;
                }
                put(s, at, r.sequence(), r.sizeBytes(), false);
                any = true;
            }
            java.util.List<Replica> remote = k.remote();
            for (int j = 0; j < remote.size(); j++) {
                Replica r = remote.get(j);
                if (!qualified[RouteKind.of(false, r.medium()).ordinal()]) {
                    unqualified = true;
                    continue;
                }
                if (r.stale() && !demand.staleHintsAllowed()) {
                    staleOnly = true;
                    continue;
                }
                int s = sourceAt(j, r.owner(), r.medium());
                if (checkExclusions && exclusions.excludes(found[s], k.key())) {
                    rejected = true;
                    continue;
                }
                put(s, at, r.sequence(), r.sizeBytes(), r.stale());
                any = true;
            }
            if (any) {
                return null;
            }
            if (rejected) {
                return PrefixStop.REJECTED_IN_REQUEST;
            }
            if (unqualified) {
                return PrefixStop.NO_QUALIFIED_PATH;
            }
            if (staleOnly) {
                return PrefixStop.STALE_HINTS_ONLY;
            }
            return switch (evidence.coverage()) {
                case CompleteAtWatermarks -> PrefixStop.ABSENT_AT_WATERMARKS;
                case PartialHints -> PrefixStop.NOT_IN_PARTIAL_HINTS;
                case Unavailable -> PrefixStop.METADATA_UNAVAILABLE;
            };
        }

        /**
         * The row of a remote replica at list position {@code j}: the source seen at that position for the previous
         * key is tried first (the index lists a chain's owners in a stable order), then {@link #source}.
         */
        private int sourceAt(int j, Incarnation owner, Medium medium) {
            int h = hint[j];
            if (h >= 0 && found[h] instanceof RouteSource.Peer p && p.medium() == medium && p.owner() == owner) {
                return h;
            }
            return hint[j] = source(owner, medium);
        }

        /** The row of (owner, medium), created on first sight; a linear scan (a demand sees few sources). */
        private int source(Incarnation owner, Medium medium) {
            for (int s = 0; s < count; s++) {
                RouteSource f = found[s];
                if (f.medium() == medium && (owner == null ? f instanceof RouteSource.Local
                        : f instanceof RouteSource.Peer p && (p.owner() == owner || p.owner().equals(owner)))) {
                    return s;
                }
            }
            if (count == found.length) {
                found = Arrays.copyOf(found, count * 2);
                seq = Arrays.copyOf(seq, count * 2);
                size = Arrays.copyOf(size, count * 2);
                stale = Arrays.copyOf(stale, count * 2);
            }
            found[count] = owner == null ? new RouteSource.Local(medium) : new RouteSource.Peer(owner, medium);
            seq[count] = new long[width];
            size[count] = new long[width];
            stale[count] = new boolean[width];
            return count++;
        }

        private void put(int s, int at, long sequence, long bytes, boolean isStale) {
            long old = seq[s][at];
            if (old == 0 || sequence > old || (sequence == old && bytes > size[s][at])) {
                seq[s][at] = sequence;
                size[s][at] = bytes;
                stale[s][at] = isStale;
            }
        }

        EligibleWindow finish(int end, PrefixStop stop) {
            Integer[] order = new Integer[count];
            for (int s = 0; s < count; s++) {
                order[s] = s;
            }
            Arrays.sort(order, (a, b) -> RouteSource.ORDER.compare(found[a], found[b]));
            RouteSource[] sorted = new RouteSource[count];
            long[][] sq = new long[count][];
            long[][] sz = new long[count][];
            boolean[][] st = new boolean[count][];
            for (int s = 0; s < count; s++) {
                sorted[s] = found[order[s]];
                sq[s] = seq[order[s]];
                sz[s] = size[order[s]];
                st[s] = stale[order[s]];
            }
            return new EligibleWindow(demand, from, end, stop, sorted, sq, sz, st);
        }
    }

    /** Cuts the window at {@code newEnd} with {@code why}. */
    void cut(int newEnd, PrefixStop why) {
        if (newEnd < end) {
            end = newEnd;
            stop = why;
        }
    }

    /** Distinct sources with a replica inside [from, end). */
    int eligibleSources() {
        int c = 0;
        for (int s = 0; s < sources.length; s++) {
            for (int i = from; i < end; i++) {
                if (seq[s][i - from] != 0) {
                    c++;
                    break;
                }
            }
        }
        return c;
    }
}
