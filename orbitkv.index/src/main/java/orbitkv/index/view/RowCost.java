package orbitkv.index.view;

/**
 * The documented bytes-per-row formula of the index budget (SNAP-12), validated against a heap
 * measurement by {@code RowFootprintHarness} (JMH sources: retained heap per installed row at 1,000,000 rows):
 *
 * <pre>
 *   bytes(keyLength) = SLOT_SHARE_BYTES + align8(16 + keyLength)
 *   SLOT_SHARE_BYTES = ceil(28 / 0.375) = 75
 * </pre>
 *
 * A slot is 28 bytes of parallel arrays (4 key reference, 8 hash+tag word, 8 sequence, 8 size); the table
 * doubles at load 0.75, so its load never drops below 0.375 and a row's share of slots is at most
 * 28 / 0.375 bytes. The key is one {@code byte[]} (16-byte header, 8-byte alignment). The owner partition
 * table is also the reverse owner index (a removed owner's rows are exactly its table), so the reverse
 * index costs no extra bytes; staging rows (tombstones included) are charged by the same formula.
 */
final class RowCost {
    static final long SLOT_SHARE_BYTES = 75;

    private RowCost() {
    }

    static long bytes(int keyLength) {
        return SLOT_SHARE_BYTES + ((16L + keyLength + 7) & ~7L);
    }
}
