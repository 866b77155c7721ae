package orbitkv.inventory;

/**
 * Bounds and timing of the source inventory (DESIGN §9). Every setting carries its unit in its name;
 * {@link #validate()} is the one place that checks them and names both sides of a broken relation
 * (BND-6). Construction validates, so an invalid configuration is unrepresentable.
 *
 * @param journalBytesMax journal retention in accounted bytes ({@link #JOURNAL_ENTRY_FIXED_BYTES} + key + namespace per entry); oldest entries are trimmed beyond it (BND-5)
 * @param journalRecordsMax journal retention in entries; oldest entries are trimmed beyond it (BND-5)
 * @param inputRecordsMax input interval bound: journal positions coalesced into one frame (PUB-1, DELTA-3)
 * @param inputBytesMax input interval bound in accounted journal bytes (PUB-1, DELTA-3)
 * @param frameEncodedBytesMax the serialized v4 {@code SourceFrame} carrying one interval or page must not exceed this (SES-10)
 * @param frameDecodedBytesMax decoded size of one frame's records ({@code orbitkv.inventory} record formula) must not exceed this (SES-10)
 * @param pageRecordsMax snapshot page bound in records (SNAP-2)
 * @param pageBytesMax snapshot page bound in accounted record bytes (SNAP-2), at most
 *     {@code frameEncodedBytesMax - PAGE_FRAME_OVERHEAD_BYTES} so a page fits a frame; a page always holds
 *     at least one record
 * @param coalescingWindowMs quiet period a reader waits after the latest unread mutation before reading (PUB-5)
 * @param maxIntentionalWaitMs cap on the intentional wait after the first unread mutation; 0 = read immediately (PUB-5)
 * @param waitersMax bound on concurrent readers blocked on the broadcast sequence signal (DELTA-14, INV-9)
 * @param immediateReadsPerWindow reads a reader may start at once, without the coalescing wait, once its stream
 *     was idle (no read during the last {@code coalescingWindowMs}; issue 37: an idle stream publishes at once; beyond
 *     this budget, while a backlog keeps arriving, the window and its cap apply unchanged); 0 = always wait for the
 *     window (PUB-4, PUB-5)
 */
public record InventoryConfig(
        long journalBytesMax,
        int journalRecordsMax,
        int inputRecordsMax,
        long inputBytesMax,
        int frameEncodedBytesMax,
        int frameDecodedBytesMax,
        int pageRecordsMax,
        long pageBytesMax,
        long coalescingWindowMs,
        long maxIntentionalWaitMs,
        int waitersMax,
        int immediateReadsPerWindow) {

    /**
     * Accounted bytes of one journal entry besides its key and namespace bytes: ring slot (4) + record
     * (40) + StateKey (24) + key array header (16) = 84 on a 64-bit JVM with compressed oops, plus up to 7
     * bytes of key padding, rounded up. Measured: 116 bytes for a 32-byte key with a shared namespace
     * (accounted 96 + 32 + namespace); see docs/parts/inventory-performance.md.
     */
    public static final int JOURNAL_ENTRY_FIXED_BYTES = 96;
    /** Largest accounted journal entry: fixed part + 255-byte namespace + 64-byte key. */
    public static final int JOURNAL_ENTRY_BYTES_MAX = JOURNAL_ENTRY_FIXED_BYTES + Namespace.MAX_BYTES + StateKey.MAX_KEY_BYTES;
    /**
     * Smallest frame bound the inventory accepts on its own: an empty delta frame and one small record must
     * fit. A source served by a session needs at least {@link SessionConfig#FRAME_ENCODED_BYTES_MIN}, which
     * fits one largest record (checked by {@link SessionConfig#requireCompatible}).
     */
    public static final int FRAME_ENCODED_BYTES_MIN = 128;
    /**
     * Frame bytes reserved around a page's records: a page's accounted record bytes plus this never
     * exceed its encoded {@code SourceFrame} (envelope, view id, ordinal, namespace table framing).
     */
    public static final int PAGE_FRAME_OVERHEAD_BYTES = 64;

    /** Default: 64 MiB of journal retention. */
    public static final long DEFAULT_JOURNAL_BYTES_MAX = 64L << 20;
    /** Default: 1,000,000 journal entries. */
    public static final int DEFAULT_JOURNAL_RECORDS_MAX = 1_000_000;
    /** Default: 1,024 input records per interval. */
    public static final int DEFAULT_INPUT_RECORDS_MAX = 1024;
    /** Default: 512 KiB of input per interval. */
    public static final long DEFAULT_INPUT_BYTES_MAX = 512L << 10;
    /** Default: 1 MiB encoded frame. */
    public static final int DEFAULT_FRAME_ENCODED_BYTES_MAX = 1 << 20;
    /** Default: 4 MiB decoded frame. */
    public static final int DEFAULT_FRAME_DECODED_BYTES_MAX = 4 << 20;
    /** Default: 1,024 records per snapshot page. */
    public static final int DEFAULT_PAGE_RECORDS_MAX = 1024;
    /** Default: 512 KiB per snapshot page. */
    public static final long DEFAULT_PAGE_BYTES_MAX = 512L << 10;
    /** Default: 2 ms coalescing window. */
    public static final long DEFAULT_COALESCING_WINDOW_MS = 2;
    /** Default: 5 ms maximum intentional wait. */
    public static final long DEFAULT_MAX_INTENTIONAL_WAIT_MS = 5;
    /** Default: 1,024 concurrent waiters on the sequence signal (8 × the 128-session bound). */
    public static final int DEFAULT_WAITERS_MAX = 1024;
    /**
     * Default: 16 immediate reads after an idle stream (issue 37). A reader that keeps pace with a burst reads it in
     * as many reads as the burst has mutations; with a budget of 4, 1.4 % of the P1 trace's window openings (bursts of
     * 16 mutations from 16 owners) waited the quiet period after the fourth read (3 to 10 ms), with 16 none did
     * (docs/results/2026-12-04-p1-tail.md). Under sustained churn a reader starts at most 16 more reads than the pure
     * window per idle-to-busy transition (small frames, bounded) before the window coalesces again.
     */
    public static final int DEFAULT_IMMEDIATE_READS_PER_WINDOW = 16;
    /** Upper bound of {@link #immediateReadsPerWindow()} (a budget, not a way to disable the window). */
    public static final int IMMEDIATE_READS_PER_WINDOW_MAX = 64;

    public InventoryConfig {
        validate(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax);
        atLeast("immediateReadsPerWindow", immediateReadsPerWindow, "0", 0);
        atMost("immediateReadsPerWindow", immediateReadsPerWindow, "IMMEDIATE_READS_PER_WINDOW_MAX", IMMEDIATE_READS_PER_WINDOW_MAX);
    }

    /** Every setting but the immediate-read budget, which takes its default. */
    public InventoryConfig(long journalBytesMax, int journalRecordsMax, int inputRecordsMax, long inputBytesMax,
            int frameEncodedBytesMax, int frameDecodedBytesMax, int pageRecordsMax, long pageBytesMax,
            long coalescingWindowMs, long maxIntentionalWaitMs, int waitersMax) {
        this(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax, frameDecodedBytesMax,
                pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, DEFAULT_IMMEDIATE_READS_PER_WINDOW);
    }

    /** The design's defaults (DESIGN §9). */
    public static InventoryConfig defaults() {
        return new InventoryConfig(DEFAULT_JOURNAL_BYTES_MAX, DEFAULT_JOURNAL_RECORDS_MAX, DEFAULT_INPUT_RECORDS_MAX,
                DEFAULT_INPUT_BYTES_MAX, DEFAULT_FRAME_ENCODED_BYTES_MAX, DEFAULT_FRAME_DECODED_BYTES_MAX,
                DEFAULT_PAGE_RECORDS_MAX, DEFAULT_PAGE_BYTES_MAX, DEFAULT_COALESCING_WINDOW_MS,
                DEFAULT_MAX_INTENTIONAL_WAIT_MS, DEFAULT_WAITERS_MAX, DEFAULT_IMMEDIATE_READS_PER_WINDOW);
    }

    public InventoryConfig withJournalBytesMax(long v) {
        return new InventoryConfig(v, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, immediateReadsPerWindow);
    }

    public InventoryConfig withJournalRecordsMax(int v) {
        return new InventoryConfig(journalBytesMax, v, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, immediateReadsPerWindow);
    }

    public InventoryConfig withInputRecordsMax(int v) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, v, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, immediateReadsPerWindow);
    }

    public InventoryConfig withInputBytesMax(long v) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, inputRecordsMax, v, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, immediateReadsPerWindow);
    }

    public InventoryConfig withFrameEncodedBytesMax(int v) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, v,
                frameDecodedBytesMax, pageRecordsMax, Math.min(pageBytesMax, v - PAGE_FRAME_OVERHEAD_BYTES), coalescingWindowMs, maxIntentionalWaitMs, waitersMax, immediateReadsPerWindow);
    }

    public InventoryConfig withFrameDecodedBytesMax(int v) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                v, pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, immediateReadsPerWindow);
    }

    public InventoryConfig withPageRecordsMax(int v) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, v, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, immediateReadsPerWindow);
    }

    public InventoryConfig withPageBytesMax(long v) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, v, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, immediateReadsPerWindow);
    }

    /** Window and cap together, because they are validated as a relation. */
    public InventoryConfig withWindow(long windowMs, long maxWaitMs) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, pageBytesMax, windowMs, maxWaitMs, waitersMax, immediateReadsPerWindow);
    }

    public InventoryConfig withWaitersMax(int v) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, v, immediateReadsPerWindow);
    }

    /**
     * The immediate-read budget per window period (issue 37); 0 restores the pure window (every read waits for the
     * quiet period or the cap).
     */
    public InventoryConfig withImmediateReadsPerWindow(int v) {
        return new InventoryConfig(journalBytesMax, journalRecordsMax, inputRecordsMax, inputBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, pageRecordsMax, pageBytesMax, coalescingWindowMs, maxIntentionalWaitMs, waitersMax, v);
    }

    private static void validate(long journalBytesMax, int journalRecordsMax, int inputRecordsMax, long inputBytesMax,
            int frameEncodedBytesMax, int frameDecodedBytesMax, int pageRecordsMax, long pageBytesMax,
            long coalescingWindowMs, long maxIntentionalWaitMs, int waitersMax) {
        atLeast("journalBytesMax", journalBytesMax, "JOURNAL_ENTRY_BYTES_MAX (one largest entry)", JOURNAL_ENTRY_BYTES_MAX);
        atLeast("journalRecordsMax", journalRecordsMax, "1", 1);
        atLeast("inputRecordsMax", inputRecordsMax, "1", 1);
        atLeast("inputBytesMax", inputBytesMax, "JOURNAL_ENTRY_BYTES_MAX (one largest entry)", JOURNAL_ENTRY_BYTES_MAX);
        atLeast("frameEncodedBytesMax", frameEncodedBytesMax, "FRAME_ENCODED_BYTES_MIN", FRAME_ENCODED_BYTES_MIN);
        atLeast("frameDecodedBytesMax", frameDecodedBytesMax, "frameEncodedBytesMax", frameEncodedBytesMax);
        atLeast("pageRecordsMax", pageRecordsMax, "1", 1);
        atLeast("pageBytesMax", pageBytesMax, "1", 1);
        atMost("pageBytesMax", pageBytesMax, "frameEncodedBytesMax - PAGE_FRAME_OVERHEAD_BYTES",
                (long) frameEncodedBytesMax - PAGE_FRAME_OVERHEAD_BYTES);
        atLeast("coalescingWindowMs", coalescingWindowMs, "0", 0);
        atLeast("maxIntentionalWaitMs", maxIntentionalWaitMs, "0", 0);
        atMost("coalescingWindowMs", coalescingWindowMs, "maxIntentionalWaitMs", maxIntentionalWaitMs);
        atMost("maxIntentionalWaitMs", maxIntentionalWaitMs, "1000 (a window is never extended indefinitely, PUB-5)", 1000);
        atLeast("waitersMax", waitersMax, "1", 1);
    }

    private static void atLeast(String name, long value, String otherName, long other) {
        if (value < other) {
            throw new IllegalArgumentException(name + " (" + value + ") must be >= " + otherName + " (" + other + ")");
        }
    }

    private static void atMost(String name, long value, String otherName, long other) {
        if (value > other) {
            throw new IllegalArgumentException(name + " (" + value + ") must be <= " + otherName + " (" + other + ")");
        }
    }
}
