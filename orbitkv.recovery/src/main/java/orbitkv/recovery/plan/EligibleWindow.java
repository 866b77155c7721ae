package orbitkv.recovery.plan;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import orbitkv.index.Replica;
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
 */
final class EligibleWindow {
    final int from;
    /** Demand index just past the last eligible key. */
    int end;
    /** Why the window ends at {@link #end}. */
    PrefixStop stop;
    final RouteSource[] sources;
    /** [source][key - from]: the replica, or null. */
    final RouteBlock[][] blocks;
    /** [source][key - from]: demand index past the end of the source's run starting here (or key if absent). */
    final int[][] runEnd;

    private EligibleWindow(int from, int end, PrefixStop stop, RouteSource[] sources, RouteBlock[][] blocks) {
        this.from = from;
        this.end = end;
        this.stop = stop;
        this.sources = sources;
        this.blocks = blocks;
        this.runEnd = new int[sources.length][];
        for (int s = 0; s < sources.length; s++) {
            int[] r = new int[end - from];
            int reach = end;
            for (int i = end - 1; i >= from; i--) {
                if (blocks[s][i - from] == null) {
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
        return blocks[source][key - from] != null;
    }

    RouteBlock block(int source, int key) {
        return blocks[source][key - from];
    }

    /** End of {@code source}'s run from {@code key}, clipped to {@link #end}. */
    int reach(int source, int key) {
        return Math.min(runEnd[source][key - from], end);
    }

    /** Payload bytes of {@code source}'s blocks over [a, b) (all present). */
    long bytes(int source, int a, int b) {
        long sum = 0;
        for (int i = a; i < b; i++) {
            sum += blocks[source][i - from].sizeBytes();
        }
        return sum;
    }

    /** Builds the window; {@link #end} may equal {@code from} (an empty prefix, with its reason). */
    static EligibleWindow build(Demand demand, Evidence evidence, int from, Exclusions exclusions) {
        int n = demand.keys().size();
        Map<RouteSource, Integer> index = new HashMap<>();
        List<RouteSource> found = new ArrayList<>();
        List<RouteBlock[]> rows = new ArrayList<>();
        int end = from;
        PrefixStop stop = PrefixStop.COMPLETE;
        for (int i = from; i < n; i++) {
            KeyEvidence k = evidence.keys().get(i);
            PrefixStop why = collect(demand, evidence, k, i - from, n - from, exclusions, index, found, rows);
            if (why != null) {
                stop = why;
                break;
            }
            end = i + 1;
        }
        // Sort the sources into the policy's order; remap the rows.
        RouteSource[] sorted = found.toArray(new RouteSource[0]);
        Arrays.sort(sorted, RouteSource.ORDER);
        RouteBlock[][] blocks = new RouteBlock[sorted.length][];
        for (int s = 0; s < sorted.length; s++) {
            blocks[s] = rows.get(index.get(sorted[s]));
        }
        return new EligibleWindow(from, end, stop, sorted, blocks);
    }

    /** Adds key {@code at}'s eligible replicas; returns null, or why it has none. */
    private static PrefixStop collect(Demand demand, Evidence evidence, KeyEvidence k, int at, int width, Exclusions exclusions,
            Map<RouteSource, Integer> index, List<RouteSource> found, List<RouteBlock[]> rows) {
        boolean any = false;
        boolean rejected = false;
        boolean unqualified = false;
        boolean staleOnly = false;
        for (LocalResidence r : k.local()) {
            RouteSource src = new RouteSource.Local(r.medium());
            if (!evidence.qualifiedKinds().contains(src.kind())) {
                unqualified = true;
            } else if (!exclusions.isEmpty() && exclusions.excludes(src, k.key())) {
                rejected = true;
            } else {
                put(index, found, rows, src, width, at, new RouteBlock(k.key(), r.sequence(), r.sizeBytes(), false));
                any = true;
            }
        }
        for (Replica r : k.remote()) {
            RouteSource src = new RouteSource.Peer(r.owner(), r.medium());
            if (!evidence.qualifiedKinds().contains(RouteKind.of(false, r.medium()))) {
                unqualified = true;
            } else if (r.stale() && !demand.staleHintsAllowed()) {
                staleOnly = true;
            } else if (!exclusions.isEmpty() && exclusions.excludes(src, k.key())) {
                rejected = true;
            } else {
                put(index, found, rows, src, width, at, new RouteBlock(k.key(), r.sequence(), r.sizeBytes(), r.stale()));
                any = true;
            }
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

    private static void put(Map<RouteSource, Integer> index, List<RouteSource> found, List<RouteBlock[]> rows, RouteSource src,
            int width, int at, RouteBlock b) {
        Integer s = index.get(src);
        if (s == null) {
            s = found.size();
            index.put(src, s);
            found.add(src);
            rows.add(new RouteBlock[width]);
        }
        RouteBlock[] row = rows.get(s);
        RouteBlock old = row[at];
        if (old == null || b.sequence() > old.sequence() || (b.sequence() == old.sequence() && b.sizeBytes() > old.sizeBytes())) {
            row[at] = b;
        }
    }

    /** Cuts the window at {@code newEnd} with {@code why}. */
    void cut(int newEnd, PrefixStop why) {
        if (newEnd < end) {
            end = newEnd;
            stop = why;
        }
    }

    /** Distinct sources with a block inside [from, end). */
    int eligibleSources() {
        int c = 0;
        for (int s = 0; s < sources.length; s++) {
            for (int i = from; i < end; i++) {
                if (blocks[s][i - from] != null) {
                    c++;
                    break;
                }
            }
        }
        return c;
    }
}
