package orbitkv.inventory;

import java.util.Comparator;

/**
 * The resident-map order (DESIGN §4, SNAP-2): {@link StateKey} unsigned lexicographic, then medium
 * (DRAM &lt; SSD). Snapshot cursors and coalesced records follow it.
 */
public final class ResidenceOrder {
    /** Orders records by {@code (StateKey, medium)} only; sequences and ops are ignored. */
    public static final Comparator<ResidenceRecord> RECORDS = ResidenceOrder::compare;

    private ResidenceOrder() {}

    /** Compares {@code (key, medium)} of two records. */
    public static int compare(ResidenceRecord a, ResidenceRecord b) {
        return compare(a.key(), a.medium(), b.key(), b.medium());
    }

    /** Compares two {@code (StateKey, medium)} pairs. */
    public static int compare(StateKey ka, Medium ma, StateKey kb, Medium mb) {
        int c = ka.compareTo(kb);
        return c != 0 ? c : ma.compareTo(mb);
    }
}
