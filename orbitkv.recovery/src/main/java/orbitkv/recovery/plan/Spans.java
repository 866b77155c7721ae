package orbitkv.recovery.plan;

import orbitkv.recovery.Demand;

/**
 * A plan's routes as (source row, demand index from, demand index to) triples in demand order: the fixed plan or
 * a search alternative inside one {@link PlanScratch}. Primitive arrays of {@link Demand#KEYS_MAX} entries (every
 * span covers at least one key, so a demand never needs more), rewritten by every decision: single owner, never
 * shared, never returned to a caller (routes are materialized from it before the scratch goes back to its pool).
 */
final class Spans {
    private final int[] source = new int[Demand.KEYS_MAX];
    private final int[] from = new int[Demand.KEYS_MAX];
    private final int[] to = new int[Demand.KEYS_MAX];
    private int size;

    void clear() {
        size = 0;
    }

    void add(int sourceRow, int fromIndex, int toIndex) {
        source[size] = sourceRow;
        from[size] = fromIndex;
        to[size] = toIndex;
        size++;
    }

    /** Reserves {@code n} spans, filled afterwards with {@link #set} (the search writes them back to front). */
    void resize(int n) {
        size = n;
    }

    void set(int i, int sourceRow, int fromIndex, int toIndex) {
        source[i] = sourceRow;
        from[i] = fromIndex;
        to[i] = toIndex;
    }

    int size() {
        return size;
    }

    int source(int i) {
        return source[i];
    }

    int from(int i) {
        return from[i];
    }

    int to(int i) {
        return to[i];
    }

    /** Same routes (source rows and bounds), in the same order. */
    boolean sameAs(Spans o) {
        if (size != o.size) {
            return false;
        }
        for (int i = 0; i < size; i++) {
            if (source[i] != o.source[i] || from[i] != o.from[i] || to[i] != o.to[i]) {
                return false;
            }
        }
        return true;
    }
}
