package orbitkv.index.view;

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
    ResidenceTable table = new ResidenceTable(0);
    long chargedBytes;
    long pagesStaged;
    long lastFrame;
    long replayCursor;
    boolean replayStarted;
    long maxScannedSequence;
    ResidenceRecord lastPageRecord;

    StagingView(UUID viewId, long s0, long beginFrame, TranscriptDigest.Builder transcript) {
        this.viewId = viewId;
        this.s0 = s0;
        this.beginFrame = beginFrame;
        this.lastFrame = beginFrame;
        this.replayCursor = s0;
        this.transcript = transcript;
    }
}
