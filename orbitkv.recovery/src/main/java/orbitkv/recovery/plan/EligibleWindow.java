package orbitkv.recovery.plan;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.membership.Incarnation;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RouteSource;

/**
 * The eligible replicas of the demand from {@code from} up to the first key without one (ROUTE-1, ROUTE-2,
 * IDX-14), as a table source x key. A replica is eligible iff its route kind has a qualified path, it is not a
 * stale hint (unless the demand allows them) and this request has not excluded it. Sources are distinct
 * (owner, medium) pairs sorted by {@link RouteSource#ORDER}; when the evidence lists one source twice for a key
 * the higher sequence (then the larger size) is kept, so the table never depends on the evidence's order.
 * Rows are primitive arrays (a sequence of 0 = absent): the planner allocates route blocks only for chosen routes.
 *
 * <p>Reused: one window lives in one {@link PlanScratch} and is refilled by every decision of its owner
 * ({@link #fill}). Rows are {@link Demand#KEYS_MAX} wide, so any demand fits; a row and its {@link RouteSource} and
 * {@link RouteClass} stay in the window after the decision that created them ("retained"), so the next decision
 * that sees the same source (the common case: a Manager restores from the same few owners) reuses all three
 * instead of allocating them. At most {@link #ROWS_RETAINED_MAX} rows survive a decision ({@link #release}); a
 * demand with more sources than that still plans correctly, it just allocates the extra rows for itself. Only
 * {@code [0, sourceCount())} is this decision's table; a retained source beyond it is invisible to every reader.
 * Not thread-safe: its owner is the thread holding the scratch.
 */
final class EligibleWindow {
    /**
     * Source rows kept between decisions: 2 local tiers plus 30 peer tiers, above a typical demand's sources
     * (local + the replicas of one chain's owners) and small (a row is 128 x 21 B, so 32 rows are 86 KiB).
     */
    static final int ROWS_RETAINED_MAX = 32;
    private static final RouteKind[] KINDS = RouteKind.values();

    int from;
    /** Demand index just past the last eligible key. */
    int end;
    /** Why the window ends at {@link #end}. */
    PrefixStop stop;
    /** [0, count): this decision's sources in policy order; [count, retained): sources kept from earlier decisions. */
    private RouteSource[] sources = new RouteSource[8];
    /** The cost-model class of each source, made once per retained row. */
    private RouteClass[] classes = new RouteClass[8];
    /** The owner instance the current evidence used for a peer row (an identity fast path; equality decides). */
    private Incarnation[] owners = new Incarnation[8];
    /** [source][key - from]: residency sequence, 0 when the source has no eligible replica of the key. */
    private long[][] seq = new long[8][];
    private long[][] size = new long[8][];
    private boolean[][] stale = new boolean[8][];
    /** [source][key - from]: demand index past the end of the source's run starting here (or key if absent). */
    private int[][] runEnd = new int[8][];
    private int count;
    private int retained;
    private Demand demand;

    // collection state, valid only inside fill()
    private Evidence evidence;
    private Exclusions exclusions;
    private int width;
    private final boolean[] qualified = new boolean[KINDS.length];
    /** Per position in a key's remote list: the row that position held for the previous key (-1: none). */
    private final int[] hint = new int[KeyEvidence.REMOTE_REPLICAS_MAX];

    int sourceCount() {
        return count;
    }

    RouteSource source(int row) {
        return sources[row];
    }

    RouteClass routeClass(int row) {
        return classes[row];
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

    /**
     * Refills the window for {@code demand} from index {@code from}; {@link #end} may equal {@code from} (an empty
     * prefix, with its reason). Allocates nothing once every source of the demand has a retained row.
     */
    void fill(Demand demand, Evidence evidence, int from, Exclusions exclusions) {
        this.demand = demand;
        this.evidence = evidence;
        this.exclusions = exclusions;
        this.from = from;
        this.width = demand.keys().size() - from;
        this.count = 0;
        Set<RouteKind> kinds = evidence.qualifiedKinds();
        for (RouteKind k : KINDS) {
            qualified[k.ordinal()] = kinds.contains(k);
        }
        Arrays.fill(hint, -1);
        List<KeyEvidence> keys = evidence.keys();
        int n = demand.keys().size();
        int last = from;
        PrefixStop why = PrefixStop.COMPLETE;
        for (int i = from; i < n; i++) {
            PrefixStop missing = collect(keys.get(i), i - from);
            if (missing != null) {
                why = missing;
                break;
            }
            last = i + 1;
        }
        this.end = last;
        this.stop = why;
        this.evidence = null;
        this.exclusions = null;
        sortSources();
        for (int s = 0; s < count; s++) {
            runEnds(s);
        }
    }

    /**
     * Drops the request's references (the demand, the owners the evidence named) and trims the rows to
     * {@link #ROWS_RETAINED_MAX} after a decision with more sources than that.
     */
    void release() {
        demand = null;
        Arrays.fill(owners, null);
        if (sources.length > ROWS_RETAINED_MAX) {
            sources = Arrays.copyOf(sources, ROWS_RETAINED_MAX);
            classes = Arrays.copyOf(classes, ROWS_RETAINED_MAX);
            owners = new Incarnation[ROWS_RETAINED_MAX];
            seq = Arrays.copyOf(seq, ROWS_RETAINED_MAX);
            size = Arrays.copyOf(size, ROWS_RETAINED_MAX);
            stale = Arrays.copyOf(stale, ROWS_RETAINED_MAX);
            runEnd = Arrays.copyOf(runEnd, ROWS_RETAINED_MAX);
            retained = Math.min(retained, ROWS_RETAINED_MAX);
        }
        count = 0;
    }

    /** Adds key {@code at}'s eligible replicas; returns null, or why it has none. */
    private PrefixStop collect(KeyEvidence k, int at) {
        boolean any = false;
        boolean rejected = false;
        boolean unqualified = false;
        boolean staleOnly = false;
        boolean checkExclusions = !exclusions.isEmpty();
        List<LocalResidence> local = k.local();
        for (int j = 0; j < local.size(); j++) {
            LocalResidence r = local.get(j);
            if (!qualified[RouteKind.of(true, r.medium()).ordinal()]) {
                unqualified = true;
                continue;
            }
            int s = row(null, r.medium());
            if (checkExclusions && exclusions.excludes(sources[s], k.key())) {
                rejected = true;
                continue;
            }
            put(s, at, r.sequence(), r.sizeBytes(), false);
            any = true;
        }
        List<Replica> remote = k.remote();
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
            int s = rowAt(j, r.owner(), r.medium());
            if (checkExclusions && exclusions.excludes(sources[s], k.key())) {
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
     * The row of a remote replica at list position {@code j}: the row seen at that position for the previous key
     * is tried first (the index lists a chain's owners in a stable order), then {@link #row}.
     */
    private int rowAt(int j, Incarnation owner, Medium medium) {
        int h = hint[j];
        if (h >= 0 && owners[h] == owner && sources[h].medium() == medium) {
            return h;
        }
        return hint[j] = row(owner, medium);
    }

    /**
     * The active row of (owner, medium; owner null = local): found among this decision's rows, else a retained
     * row of an earlier decision is reactivated, else a row is made (a linear scan: a demand sees few sources).
     */
    private int row(Incarnation owner, Medium medium) {
        for (int s = 0; s < count; s++) {
            if (matches(s, owner, medium)) {
                owners[s] = owner;
                return s;
            }
        }
        for (int s = count; s < retained; s++) {
            if (matches(s, owner, medium)) {
                swap(s, count);
                return activate(owner);
            }
        }
        if (count == sources.length) {
            grow();
        }
        if (count < retained) {
            if (retained < sources.length) { // keep the earlier decision's source: move it behind the retained ones
                swap(count, retained);
                retained++;
            } // else: all slots hold sources; the one at count gives up its slot (its row arrays are reused)
        } else {
            retained++;
        }
        if (seq[count] == null) {
            seq[count] = new long[Demand.KEYS_MAX];
            size[count] = new long[Demand.KEYS_MAX];
            stale[count] = new boolean[Demand.KEYS_MAX];
            runEnd[count] = new int[Demand.KEYS_MAX];
        }
        RouteSource made = owner == null ? new RouteSource.Local(medium) : new RouteSource.Peer(owner, medium);
        sources[count] = made;
        classes[count] = RouteClass.of(made);
        return activate(owner);
    }

    private boolean matches(int s, Incarnation owner, Medium medium) {
        RouteSource f = sources[s];
        return f.medium() == medium && (owner == null ? f instanceof RouteSource.Local
                : f instanceof RouteSource.Peer p && (p.owner() == owner || p.owner().equals(owner)));
    }

    /** Makes slot {@code count} part of this decision with an empty row. */
    private int activate(Incarnation owner) {
        owners[count] = owner;
        Arrays.fill(seq[count], 0, width, 0L);
        Arrays.fill(size[count], 0, width, 0L);
        Arrays.fill(stale[count], 0, width, false);
        return count++;
    }

    private void grow() {
        int n = sources.length * 2;
        sources = Arrays.copyOf(sources, n);
        classes = Arrays.copyOf(classes, n);
        owners = Arrays.copyOf(owners, n);
        seq = Arrays.copyOf(seq, n);
        size = Arrays.copyOf(size, n);
        stale = Arrays.copyOf(stale, n);
        runEnd = Arrays.copyOf(runEnd, n);
    }

    private void put(int s, int at, long sequence, long bytes, boolean isStale) {
        long old = seq[s][at];
        if (old == 0 || sequence > old || (sequence == old && bytes > size[s][at])) {
            seq[s][at] = sequence;
            size[s][at] = bytes;
            stale[s][at] = isStale;
        }
    }

    /** Insertion sort of this decision's rows by {@link RouteSource#ORDER} (few rows; no allocation). */
    private void sortSources() {
        for (int i = 1; i < count; i++) {
            for (int j = i; j > 0 && RouteSource.ORDER.compare(sources[j - 1], sources[j]) > 0; j--) {
                swap(j - 1, j);
            }
        }
    }

    private void swap(int a, int b) {
        RouteSource s = sources[a];
        sources[a] = sources[b];
        sources[b] = s;
        RouteClass c = classes[a];
        classes[a] = classes[b];
        classes[b] = c;
        Incarnation o = owners[a];
        owners[a] = owners[b];
        owners[b] = o;
        long[] l = seq[a];
        seq[a] = seq[b];
        seq[b] = l;
        l = size[a];
        size[a] = size[b];
        size[b] = l;
        boolean[] st = stale[a];
        stale[a] = stale[b];
        stale[b] = st;
        int[] r = runEnd[a];
        runEnd[a] = runEnd[b];
        runEnd[b] = r;
    }

    private void runEnds(int s) {
        long[] present = seq[s];
        int[] r = runEnd[s];
        int reach = end;
        for (int i = end - 1; i >= from; i--) {
            if (present[i - from] == 0) {
                reach = i;
                r[i - from] = i;
            } else {
                r[i - from] = reach;
            }
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
        for (int s = 0; s < count; s++) {
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
