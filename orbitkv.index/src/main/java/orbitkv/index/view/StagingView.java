package orbitkv.index.view;

import java.util.ArrayDeque;
import java.util.UUID;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.TranscriptDigest;

/**
 * The hidden staging view of one snapshot attempt (SNAP-1..SNAP-9): rows applied by version with
 * tombstones kept until commit, the page/frame ordinals seen, the replay cursor from S0, the maximum
 * scanned sequence and the running transcript digest. Never served (SNAP-11); guarded by its owner
 * view's apply mutex.
 */
final class StagingView {
    final UUID viewId;
    final long s0;
    final long beginFrame;
    final TranscriptDigest.Builder transcript;
    /**
     * Page rows not yet in a table. Pages cannot collide with each other (SNAP-2: strictly increasing across
     * pages, all before replay), so they are kept as prepared and the table is built once, at its final
     * size, when replay starts or at commit: no growth copies, and rows inserted in home-slot order
     * ({@link ResidenceTable#ofDistinctRows}), each page released once its rows are copied.
     */
    private final ArrayDeque<PreparedFrame> pages = new ArrayDeque<>();
    private long pageRows;
    private ResidenceTable table;
    long chargedBytes;
    long pagesStaged;
    long lastFrame;
    long replayCursor;
    boolean replayStarted;
    long maxScannedSequence;
    /** True once a replay frame staged a delete: only then can the table hold tombstones to remove at commit. */
    boolean deletesStaged;
    ResidenceRecord lastPageRecord;

    /** Keeps a page's rows (charged by the caller) until the table is built. */
    void appendPage(PreparedFrame page) {
        if (table != null) {
            throw new IllegalStateException("staging view " + viewId + ": a page after replay started");
        }
        pages.add(page);
        pageRows += page.rows();
    }

    /** The staging table, built from the pages on first use. */
    ResidenceTable table() {
        if (table == null) {
            table = ResidenceTable.ofDistinctRows(Math.toIntExact(pageRows), pages);
        }
        return table;
    }

    /** Replaces the table by its grown copy. */
    void replaceTable(ResidenceTable grown) {
        if (table == null) {
            throw new IllegalStateException("staging view " + viewId + ": no table to replace yet");
        }
        table = grown;
    }

    /** Rows staged so far, tombstones included. */
    long rows() {
        return table != null ? table.size() : pageRows;
    }

    StagingView(UUID viewId, long s0, long beginFrame, TranscriptDigest.Builder transcript) {
        this.viewId = viewId;
        this.s0 = s0;
        this.beginFrame = beginFrame;
        this.lastFrame = beginFrame;
        this.replayCursor = s0;
        this.transcript = transcript;
    }
}
