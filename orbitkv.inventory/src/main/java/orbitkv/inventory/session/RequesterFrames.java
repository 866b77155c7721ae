package orbitkv.inventory.session;

import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.ViewReceiver;
import orbitkv.inventory.codec.FrameCodec;
import orbitkv.inventory.codec.SourceFrameDecoder;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.NeedRepair;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.ResumeFrom;
import orbitkv.inventory.wire.SnapshotBegin;
import orbitkv.inventory.wire.SnapshotCommit;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.CrashPoints;
import orbitkv.membership.Incarnation;

/**
 * The requester core's handling of one checked source frame (issue 38; SNAP-1..SNAP-10, DELTA-7..DELTA-9,
 * SES-14, IDX-11): field checks ({@link FrameCheck}), the {@link RequesterState} edge, and the call into the
 * {@link ViewReceiver}. Pages and deltas are decoded and bounded before the receiver sees them (DELTA-4).
 * Part of {@link RequesterCore}: no I/O, no clock, no threads; time comes in as {@code nowNanos}.
 */
final class RequesterFrames {
    /** What handling one source frame came to. */
    sealed interface Handled {
        /** Applied (or discarded as a duplicate); {@code charged} frames' bytes go into the next ACK (SES-13, SES-14). */
        record Done(boolean charged) implements Handled {}

        record Refused(Refusal refusal) implements Handled {}
    }

    private static final Handled CHARGED = new Handled.Done(true);
    private static final Handled UNCHARGED = new Handled.Done(false);

    private final RequesterCore core;
    private final ViewReceiver receiver;
    private final Incarnation source;

    RequesterFrames(RequesterCore core) {
        this.core = core;
        this.receiver = core.peer.receiver();
        this.source = core.peer.source();
    }

    private static Handled refused(ErrorCause cause, String detail) {
        return new Handled.Refused(new Refusal(cause, detail));
    }

    private static Handled refused(FrameCheck c) {
        return new Handled.Refused(c.refusal().orElseThrow());
    }

    /** Applies one frame whose stream, number and membership the core has checked. */
    Handled handle(RequesterCore.Rx rx, long nowNanos, SourceFrame f, long n, SourceFrameDecoder.Result.Read read) {
        if (!f.hasAccepted() && !core.state().accepted()) {
            return refused(ErrorCause.MALFORMED_FRAME, "first source frame must be OpenAccepted, got " + f.getBodyCase());
        }
        return switch (f.getBodyCase()) {
            case ACCEPTED -> accepted(rx, f);
            case SNAPSHOT_BEGIN -> begin(rx, nowNanos, f.getSnapshotBegin(), n);
            case SNAPSHOT_PAGE -> page(f.getSnapshotPage(), n, read);
            case DELTA -> delta(rx, f, n, read);
            case SNAPSHOT_COMMIT -> commit(rx, nowNanos, f.getSnapshotCommit());
            case LIVENESS -> {
                FrameCheck c = new FrameCheck();
                long head = c.nonNegative("liveness.source_head", f.getLiveness().getSourceHead());
                if (!c.ok()) {
                    yield refused(c);
                }
                receiver.observeLiveness(source, head); // IDX-11: the head never advances a cursor
                yield UNCHARGED;
            }
            default -> refused(ErrorCause.MALFORMED_FRAME, "source frame without a body");
        };
    }

    private Handled accepted(RequesterCore.Rx rx, SourceFrame f) {
        FrameCheck c = new FrameCheck();
        c.nonNegative("accepted.source_head", f.getAccepted().getSourceHead());
        c.nonNegative("accepted.window_bytes", f.getAccepted().getWindowBytes());
        OpenMode mode = f.getAccepted().getMode();
        if (c.ok() && mode != OpenMode.OPEN_MODE_RESUMED && mode != OpenMode.OPEN_MODE_BOOTSTRAP) {
            c.refuse(ErrorCause.UNKNOWN_ENUM_VALUE, "accepted.mode " + f.getAccepted().getModeValue());
        }
        if (!c.ok()) {
            return refused(c);
        }
        return moved(core.move(new RequesterState.Accepted(rx.id, mode == OpenMode.OPEN_MODE_RESUMED)), UNCHARGED);
    }

    private static Handled moved(RequesterState.Outcome out, Handled ifMoved) {
        return out instanceof RequesterState.Outcome.Refused r ? new Handled.Refused(r.refusal()) : ifMoved;
    }

    private Handled begin(RequesterCore.Rx rx, long nowNanos, SnapshotBegin b, long n) {
        FrameCheck c = new FrameCheck();
        UUID viewId = c.uuid("snapshot_begin.view_id", b.hasViewId(), b.getViewId());
        long s0 = c.nonNegative("snapshot_begin.s0", b.getS0());
        byte[] digest = c.digest("snapshot_begin.scope_digest", b.getScopeDigest());
        if (!c.ok()) {
            return refused(c);
        }
        if (core.state() instanceof RequesterState.Staging) { // SNAP-4: a new S0 replaces the aborted attempt
            core.peer.metrics().resets.inc(ResetCause.SNAPSHOT_ABORTED);
            receiver.discardStaging(source, ResetCause.SNAPSHOT_ABORTED);
        }
        if (receiver.beginStaging(source, viewId, new ScopeDigest(digest), s0, n) instanceof StageOutcome.Rejected r) {
            return refused(Wire.cause(r.reason().wireCause()), "snapshot begin refused: " + r.reason());
        }
        RequesterState.Outcome out = core.move(new RequesterState.Begun(rx.id, viewId, nowNanos));
        if (!(out instanceof RequesterState.Outcome.Moved)) {
            receiver.discardStaging(source, ResetCause.DISCONNECT); // nobody else discards it (SNAP-10)
        }
        return moved(out, CHARGED);
    }

    private Handled page(SnapshotPage p, long n, SourceFrameDecoder.Result.Read read) {
        FrameCheck c = new FrameCheck();
        UUID viewId = c.uuid("snapshot_page.view_id", p.hasViewId(), p.getViewId());
        long ordinal = c.nonNegative("snapshot_page.page_ordinal", p.getPageOrdinal());
        if (c.ok() && ordinal < 1) {
            c.refuse(ErrorCause.MALFORMED_FRAME, "snapshot_page.page_ordinal must be >= 1");
        }
        if (!c.ok()) {
            return refused(c);
        }
        return switch (read != null ? read.page() : FrameCodec.decodeRecords(p.getNamespacesList(),
                p.getRecordsList(), null, core.peer.config().frameDecodedBytesMax())) {
            case FrameCodec.Decoded.Rejected<RecordBatch> r -> refused(r.cause(), r.detail());
            case FrameCodec.Decoded.Ok<RecordBatch> ok -> {
                if (receiver.stagePage(source, viewId, ordinal, n, ok.value()) instanceof StageOutcome.Rejected r) {
                    yield refused(Wire.cause(r.reason().wireCause()), "snapshot page refused: " + r.reason());
                }
                CrashPoints.reach(CrashPoints.Point.SNAPSHOT_PAGE_STAGED); // off unless -Dorbitkv.crashpoints (issue 17)
                yield CHARGED;
            }
        };
    }

    private Handled delta(RequesterCore.Rx rx, SourceFrame f, long n, SourceFrameDecoder.Result.Read read) {
        FrameCodec.DecodedDelta ci;
        switch (read != null ? read.delta() : FrameCodec.decodeDelta(f.getDelta(), core.peer.config().frameDecodedBytesMax())) {
            case FrameCodec.Decoded.Rejected<FrameCodec.DecodedDelta> r -> {
                return refused(r.cause(), r.detail());
            }
            case FrameCodec.Decoded.Ok<FrameCodec.DecodedDelta> ok -> ci = ok.value();
        }
        core.peer.metrics().decodedBytes.add(FrameCodec.decodedBytes(ci.records()));
        Optional<UUID> target = core.state().deltaTarget();
        if (target.isEmpty()) {
            return refused(ErrorCause.MALFORMED_FRAME, "a delta before any snapshot begin or resumed view");
        }
        UUID view = target.get();
        return switch (receiver.applyDelta(source, view, n, ci.interval(), ci.records())) {
            case DeltaOutcome.Applied a -> {
                rx.repairRequestedAt = -1;
                rx.progressed = true;
                CrashPoints.reach(CrashPoints.Point.DELTA_APPLIED); // off unless -Dorbitkv.crashpoints (issue 17)
                yield CHARGED;
            }
            case DeltaOutcome.Duplicate d -> CHARGED; // DELTA-7: discarded
            case DeltaOutcome.ResumeFrom r -> {
                requestRegeneration(rx, view, r.appliedCursor(), true);
                yield CHARGED;
            }
            case DeltaOutcome.NeedRepair r -> {
                requestRegeneration(rx, view, r.appliedCursor(), false);
                yield CHARGED;
            }
            case DeltaOutcome.Rejected r -> refused(Wire.cause(r.reason().wireCause()), "delta refused: " + r.reason());
        };
    }

    /** DELTA-8/DELTA-9: one request per applied cursor; in-flight stale frames do not repeat it. */
    private void requestRegeneration(RequesterCore.Rx rx, UUID view, long applied, boolean overlap) {
        if (rx.repairRequestedAt == applied) {
            return;
        }
        rx.repairRequestedAt = applied;
        RequesterFrame.Builder b = RequesterFrame.newBuilder().setSessionId(rx.wire);
        if (overlap) {
            b.setResumeFrom(ResumeFrom.newBuilder().setViewId(Wire.uuid(view)).setAppliedCursor(applied));
        } else {
            b.setNeedRepair(NeedRepair.newBuilder().setViewId(Wire.uuid(view)).setAppliedCursor(applied));
        }
        core.send(rx, b.build());
    }

    private Handled commit(RequesterCore.Rx rx, long nowNanos, SnapshotCommit c) {
        FrameCheck check = new FrameCheck();
        UUID viewId = check.uuid("snapshot_commit.view_id", c.hasViewId(), c.getViewId());
        long s1 = check.nonNegative("snapshot_commit.s1", c.getS1());
        long pages = check.nonNegative("snapshot_commit.page_count", c.getPageCount());
        long first = check.nonNegative("snapshot_commit.first_frame", c.getFirstFrame());
        long last = check.nonNegative("snapshot_commit.last_frame", c.getLastFrame());
        long maxScanned = check.nonNegative("snapshot_commit.max_scanned_sequence", c.getMaxScannedSequence());
        byte[] digest = check.transcriptDigest("snapshot_commit.transcript_digest", c.getTranscriptDigest());
        if (!check.ok()) {
            return refused(check);
        }
        CommitMarker marker;
        try { // the contract record validates its relations; its refusal becomes this frame's
            marker = new CommitMarker(s1, pages, first, last, maxScanned, new TranscriptDigest(digest));
        } catch (IllegalArgumentException e) {
            return refused(ErrorCause.MALFORMED_FRAME, "snapshot_commit: " + e.getMessage());
        }
        long begun = core.state() instanceof RequesterState.Staging s ? s.begunNanos() : nowNanos;
        return switch (receiver.commit(source, viewId, marker)) {
            case CommitOutcome.Installed i -> {
                core.installed();
                rx.progressed = true;
                core.peer.metrics().bootstrapSeconds.observeNanos(nowNanos - begun);
                yield moved(core.move(new RequesterState.Installed(rx.id, i.viewId())), CHARGED);
            }
            case CommitOutcome.Rejected r -> {
                core.move(new RequesterState.CommitRejected(rx.id)); // the receiver discarded the attempt
                core.peer.metrics().resets.inc(ResetCause.COMMIT_REJECTED);
                yield refused(Wire.cause(r.reason().wireCause()), "commit refused: " + r.reason());
            }
        };
    }
}
