package orbitkv.index.view;

import java.util.Arrays;
import java.util.Queue;
import java.util.concurrent.Executor;

/**
 * Rows of one owner view: an open-addressing (linear probing, backward-shift deletion) table keyed by
 * {@code (namespace id, medium, key bytes)} with parallel primitive arrays (key reference, hash+tag word,
 * sequence, size), so a row costs a slot share
 * plus one key array instead of boxed records (see {@link RowCost}). A size of {@link #TOMBSTONE} marks a
 * staged delete (SNAP-9); installed tables never hold tombstones.
 *
 * <p>Not thread-safe: exactly one applier mutates a table (its owner view's apply mutex), and readers of
 * an installed table hold the owner's read lock while the applier holds the write lock. The one exception
 * is a bulk build ({@link #ofDistinctRows}), which may fill disjoint halves of a table nobody else can see
 * yet on two threads, and returns only after both ended.
 */
final class ResidenceTable {
    /** Size marker of a staged delete. */
    static final long TOMBSTONE = -1;
    static final int MIN_CAPACITY = 16;

    /** Marks an occupied slot in {@link #meta}; tags are below 2^17, so bit 31 is free. */
    private static final long OCCUPIED = 1L << 31;

    private byte[][] keys;
    /** {@code hash << 32 | OCCUPIED | tag}; 0 = empty. One read decides most probes without touching the key. */
    private long[] meta;
    private long[] sequences;
    private long[] sizes;
    private int size;
    private int mask;
    private int threshold;

    ResidenceTable(int expectedRows) {
        allocate(capacityFor(expectedRows));
    }

    /**
     * The probe hash of a row. It ignores the medium bit of {@code tag} on purpose: the DRAM and SSD rows
     * of one StateKey share a home slot, so linear probing keeps them adjacent and a lookup of both
     * media costs one cache miss instead of two.
     */
    static int hash(int tag, byte[] key) {
        int h = Arrays.hashCode(key) * 0x9E3779B9 ^ (tag >>> 1) * 0x85EBCA6B;
        return h ^ (h >>> 16);
    }

    static int tag(int namespaceId, int mediumOrdinal) {
        return namespaceId << 1 | mediumOrdinal;
    }

    private static int capacityFor(int rows) {
        long needed = Math.max(MIN_CAPACITY, (long) Math.ceil(rows / 0.75) + 1);
        if (needed > (1 << 30)) {
            throw new IllegalStateException("residence table cannot hold " + rows + " rows");
        }
        return Integer.highestOneBit((int) needed - 1) << 1;
    }

    private void allocate(int capacity) {
        keys = new byte[capacity][];
        meta = new long[capacity];
        sequences = new long[capacity];
        sizes = new long[capacity];
        mask = capacity - 1;
        threshold = (int) (capacity * 0.75);
    }

    int size() {
        return size;
    }

    int capacity() {
        return keys.length;
    }

    private static long meta(int tag, int hash) {
        return (long) hash << 32 | OCCUPIED | tag;
    }

    private int homeOf(int slot) {
        return (int) (meta[slot] >>> 32) & mask;
    }

    /** The slot of the row, or -1. */
    int find(int tag, byte[] key, int hash) {
        long m = meta(tag, hash);
        int i = hash & mask;
        while (true) {
            long x = meta[i];
            if (x == 0) {
                return -1;
            }
            if (x == m && Arrays.equals(keys[i], key)) {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    long sequenceAt(int slot) {
        return sequences[slot];
    }

    long sizeAt(int slot) {
        return sizes[slot];
    }

    int tagAt(int slot) {
        return (int) (meta[slot] & (OCCUPIED - 1));
    }

    byte[] keyAt(int slot) {
        return keys[slot];
    }

    /** True iff {@code inserts} more rows would pass the load threshold. */
    boolean needsGrowth(int inserts) {
        return size + inserts > threshold;
    }

    /**
     * A copy large enough for {@code inserts} more rows. Readers may keep reading this table while the
     * copy is built because only the single applier mutates it.
     */
    ResidenceTable grownCopy(int inserts) {
        ResidenceTable t = new ResidenceTable(size + inserts);
        // In slices, for the same reason as the passes of ofDistinctRows: growth is rare, so one long loop
        // would run on-stack-replaced code; a method called per slice is compiled normally.
        for (int from = 0; from < keys.length; from += COPY_SLICE_SLOTS) {
            copySlice(t, from, Math.min(keys.length, from + COPY_SLICE_SLOTS));
        }
        return t;
    }

    private static final int COPY_SLICE_SLOTS = 4096;

    private void copySlice(ResidenceTable to, int from, int end) {
        for (int i = from; i < end; i++) {
            if (meta[i] != 0) {
                to.insertFresh(tagAt(i), keys[i], (int) (meta[i] >>> 32), sequences[i], sizes[i]);
            }
        }
    }

    /**
     * Tables of at least this many slots (14 MiB of arrays) are built partitioned; smaller ones insert in
     * arrival order, which is faster while the table and the pages sit in the 32 MiB L3 together. Measured
     * by {@code StagingBuildBenchmark} (arrival order vs partitioned): 100,000 rows 3.8 vs 6.1 ms, 180,000
     * rows (2^18 slots) 7.0 vs 8.3 ms, 200,000 rows (2^19 slots) 14.3 vs 11.3 and 11.2 vs 11.5 ms in two runs,
     * 1,000,000 rows 90.9 vs 74.8 and 79.5 vs 66.8 ms. With the two-way partitioned build (arrival order vs
     * partitioned on the caller alone vs split with a helper): 100,000 rows 2.6 vs 3.9 vs 4.8 ms, 200,000 rows
     * 11.7 vs 11.8 vs 11.9 ms, 1,000,000 rows 76.3 vs 49.5 vs 43.4 ms, so the threshold stands.
     */
    static final int PARTITIONED_BUILD_SLOTS_MIN = 1 << 19;
    /**
     * Home-slot ranges of a partitioned build: at most 64 (so the scatter writes few streams), each of at least
     * 64 slots. At 1 M rows a range of the table's arrays is about 0.9 MiB and stays in L2 while it is filled.
     */
    private static final int PARTITION_BITS_MAX = 6;

    /**
     * A table of exactly the rows of {@code frames}, built at its final size. The caller guarantees the rows
     * are distinct (SNAP-2: staged pages are strictly ordered and come before any replay), so nothing is
     * probed for presence.
     *
     * <p>Why partitioned: rows arrive in key order, so inserting them as they come touches every array of
     * the table at a random slot per row, one cache miss per array and a scattered G1 card mark per key
     * reference. Large builds therefore first sort the rows by the top bits of their home slot (one
     * counting-sort pass into transient columns of 28 bytes per row, released when this returns) and then
     * insert them range by range, walking the table's arrays from start to end.
     *
     * <p>The frames are taken from {@code frames} as they are consumed (the queue is empty afterwards), so
     * each frame's rows are released once copied and the transient columns replace them instead of adding to
     * them.
     */
    static ResidenceTable ofDistinctRows(int rows, Queue<PreparedFrame> frames) {
        return ofDistinctRows(rows, frames, PARTITIONED_BUILD_SLOTS_MIN, BUILD_HELPER);
    }

    /**
     * Where a partitioned build offers its second half: the JDK's common pool, as parallel streams use it. A
     * build offers one task per pass (three per build) and runs it itself if the pool has not started it, so
     * nothing queues behind a busy pool and the pool's size bounds nothing here.
     */
    private static final Executor BUILD_HELPER = java.util.concurrent.ForkJoinPool.commonPool();

    /** {@link #ofDistinctRows(int, Queue, int, Executor)} on the caller alone. */
    static ResidenceTable ofDistinctRows(int rows, Queue<PreparedFrame> frames, int partitionedSlotsMin) {
        return ofDistinctRows(rows, frames, partitionedSlotsMin, null);
    }

    /**
     * {@link #ofDistinctRows(int, Queue)} partitioning from {@code partitionedSlotsMin} slots (tests use small
     * ones); a partitioned build splits each pass in two halves and offers one to {@code helper} (null: the
     * caller runs both, see {@link SplitWork}). The halves never write the same slot: the lower half inserts
     * the lower half of the home ranges into the lower half of the slots, the upper half the rest, and a row
     * whose probe would leave its half (past the middle, or around the end of the table) is inserted
     * afterwards by the caller, probing as usual. Linear probing only needs each row reachable from its home
     * slot through occupied slots, which holds in any insertion order.
     */
    static ResidenceTable ofDistinctRows(int rows, Queue<PreparedFrame> frames, int partitionedSlotsMin, Executor helper) {
        int counted = 0;
        for (PreparedFrame f : frames) {
            counted += f.rows();
        }
        if (counted != rows) {
            throw new IllegalArgumentException("bulk build announced " + rows + " rows but the frames hold " + counted);
        }
        ResidenceTable t = new ResidenceTable(rows);
        if (t.keys.length < partitionedSlotsMin) {
            for (PreparedFrame f = frames.poll(); f != null; f = frames.poll()) {
                for (int i = 0; i < f.rows(); i++) {
                    t.insert(f.tag(i), f.key(i), f.hash(i), f.sequence(i), f.size(i));
                }
            }
            return t;
        }
        int capacityBits = Integer.numberOfTrailingZeros(t.keys.length);
        int shift = capacityBits - Math.max(0, Math.min(PARTITION_BITS_MAX, capacityBits - 6));
        int ranges = (t.mask >>> shift) + 1;
        PreparedFrame[] fs = new PreparedFrame[frames.size()];
        for (int k = 0; k < fs.length; k++) {
            fs[k] = frames.poll();
        }
        int split = fs.length / 2;
        int[] lowCounts = new int[ranges];
        int[] highCounts = new int[ranges];
        SplitWork.run(helper, () -> t.countHomes(fs, 0, split, lowCounts, shift), () -> t.countHomes(fs, split, fs.length, highCounts, shift));
        int[] starts = new int[ranges + 1];
        int[] lowNext = new int[ranges];
        int[] highNext = new int[ranges];
        for (int r = 0; r < ranges; r++) {
            lowNext[r] = starts[r];
            highNext[r] = starts[r] + lowCounts[r];
            starts[r + 1] = highNext[r] + highCounts[r];
        }
        Columns sorted = new Columns(rows);
        SplitWork.run(helper, () -> t.scatter(fs, 0, split, sorted, lowNext, shift), () -> t.scatter(fs, split, fs.length, sorted, highNext, shift));
        int middleRange = ranges / 2;
        Region low = new Region(middleRange << shift);
        Region high = new Region(t.keys.length);
        SplitWork.run(helper, () -> t.insertRanges(sorted, starts, 0, middleRange, low),
                () -> t.insertRanges(sorted, starts, middleRange, ranges, high));
        t.size = low.inserted + high.inserted;
        t.insertDeferred(sorted, low);
        t.insertDeferred(sorted, high);
        return t;
    }

    /** Rows of a partitioned build in home-range order (transient, 28 bytes per row). */
    private static final class Columns {
        final int[] tags;
        final byte[][] keys;
        final int[] hashes;
        final long[] sequences;
        final long[] sizes;

        Columns(int rows) {
            tags = new int[rows];
            keys = new byte[rows][];
            hashes = new int[rows];
            sequences = new long[rows];
            sizes = new long[rows];
        }
    }

    /**
     * The slots below {@code end} one half of a partitioned build fills, and the rows it left to the caller:
     * at most the rows of its half (transient, one int each, gone when the build returns); in practice the
     * few rows of the probe run that crosses the middle or the end.
     */
    private static final class Region {
        final int end;
        int inserted;
        int[] deferred = new int[16];
        int deferredCount;

        Region(int end) {
            this.end = end;
        }

        void defer(int row) {
            if (deferredCount == deferred.length) {
                deferred = Arrays.copyOf(deferred, deferredCount * 2);
            }
            deferred[deferredCount++] = row;
        }
    }

    // The passes of a partitioned build run per frame and per range, not in one long loop: a bootstrap is
    // rare, and small methods called a thousand times per build are compiled normally instead of relying on
    // on-stack replacement of a loop entered once.

    private void countHomes(PreparedFrame[] fs, int from, int to, int[] counts, int shift) {
        for (int k = from; k < to; k++) {
            countHomes(fs[k], counts, shift);
        }
    }

    private void countHomes(PreparedFrame f, int[] counts, int shift) {
        for (int i = 0; i < f.rows(); i++) {
            counts[(f.hash(i) & mask) >>> shift]++;
        }
    }

    /** Scatters frames {@code [from, to)} and drops them, so each frame's rows are released once copied. */
    private void scatter(PreparedFrame[] fs, int from, int to, Columns sorted, int[] next, int shift) {
        for (int k = from; k < to; k++) {
            scatter(fs[k], sorted, next, shift);
            fs[k] = null;
        }
    }

    private void scatter(PreparedFrame f, Columns to, int[] next, int shift) {
        for (int i = 0; i < f.rows(); i++) {
            int p = next[(f.hash(i) & mask) >>> shift]++;
            to.tags[p] = f.tag(i);
            to.keys[p] = f.key(i);
            to.hashes[p] = f.hash(i);
            to.sequences[p] = f.sequence(i);
            to.sizes[p] = f.size(i);
        }
    }

    private void insertRanges(Columns rows, int[] starts, int fromRange, int toRange, Region region) {
        for (int r = fromRange; r < toRange; r++) {
            insertRange(rows, starts[r], starts[r + 1], region);
        }
    }

    /** Inserts sorted rows {@code [from, to)}, whose home slots lie in {@code region}, without leaving it. */
    private void insertRange(Columns rows, int from, int to, Region region) {
        for (int p = from; p < to; p++) {
            int hash = rows.hashes[p];
            int i = hash & mask;
            while (i < region.end && meta[i] != 0) {
                i++;
            }
            if (i == region.end) {
                region.defer(p);
                continue;
            }
            keys[i] = rows.keys[p];
            meta[i] = meta(rows.tags[p], hash);
            sequences[i] = rows.sequences[p];
            sizes[i] = rows.sizes[p];
            region.inserted++;
        }
    }

    private void insertDeferred(Columns rows, Region region) {
        for (int d = 0; d < region.deferredCount; d++) {
            int p = region.deferred[d];
            insert(rows.tags[p], rows.keys[p], rows.hashes[p], rows.sequences[p], rows.sizes[p]);
        }
    }

    private void insertFresh(int tag, byte[] key, int hash, long seq, long sz) {
        int i = hash & mask;
        while (meta[i] != 0) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        meta[i] = meta(tag, hash);
        sequences[i] = seq;
        sizes[i] = sz;
        size++;
    }

    /** Inserts a new row (the caller checked absence and capacity). */
    void insert(int tag, byte[] key, int hash, long seq, long sz) {
        if (size + 1 > threshold) {
            throw new IllegalStateException("residence table over its load threshold: grow before inserting");
        }
        insertFresh(tag, key, hash, seq, sz);
    }

    /** Overwrites the sequence and size of an existing row. */
    void overwrite(int slot, long seq, long sz) {
        sequences[slot] = seq;
        sizes[slot] = sz;
    }

    private void move(int from, int to) {
        keys[to] = keys[from];
        meta[to] = meta[from];
        sequences[to] = sequences[from];
        sizes[to] = sizes[from];
    }

    /** Removes the row at {@code slot} by backward shift, keeping every probe chain intact. */
    void removeAt(int slot) {
        int hole = slot;
        int j = slot;
        while (true) {
            j = (j + 1) & mask;
            if (meta[j] == 0) {
                break;
            }
            int home = homeOf(j);
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                move(j, hole);
                hole = j;
            }
        }
        keys[hole] = null;
        meta[hole] = 0;
        size--;
    }

    /**
     * Removes every tombstone in place (commit of a staging view, SNAP-9).
     *
     * @return the sum of {@link RowCost#bytes} of the removed rows
     */
    long removeTombstones() {
        long freed = 0;
        for (int i = 0; i < keys.length; i++) {
            // A backward shift may move an unvisited row into slot i: re-check it before advancing.
            while (meta[i] != 0 && sizes[i] == TOMBSTONE) {
                freed += RowCost.bytes(keys[i].length);
                removeAt(i);
            }
        }
        return freed;
    }

    /**
     * Clears up to {@code maxRows} rows of a table nobody reads any more, starting at slot {@code from}
     * (bounded cleanup of a removed owner, IDX-1).
     *
     * @return {@code [nextSlot, rowsCleared, bytesFreed]}
     */
    long[] clearBatch(int from, int maxRows) {
        int cleared = 0;
        long bytes = 0;
        int i = from;
        for (; i < keys.length && cleared < maxRows; i++) {
            if (meta[i] != 0) {
                bytes += RowCost.bytes(keys[i].length);
                keys[i] = null;
                meta[i] = 0;
                cleared++;
                size--;
            }
        }
        return new long[] {i, cleared, bytes};
    }
}
