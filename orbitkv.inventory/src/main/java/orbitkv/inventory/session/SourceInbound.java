package orbitkv.inventory.session;

import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.session.SourceState.Position;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.MembershipView;

/**
 * The receive checks of {@link SourceCore} for every requester frame after the Open (issue 38): stream identity
 * (SES-6), membership (SES-5), {@link FrameCheck} on every field, and what each body does (ACK credit SES-13,
 * FlushThrough PUB-4, ResumeFrom and NeedRepair DELTA-8..DELTA-10, the requester's Error). A frame's handling never
 * waits behind the pump (SES-3): it only moves credit or posts to the one-slot mailbox and asks for a wake-up.
 * Part of the core: no thread, clock or I/O.
 */
final class SourceInbound {
    private SourceInbound() {}

    /** Checks and handles one frame; a refusal closes the session with that cause. */
    static Optional<Refusal> check(SourceCore core, RequesterFrame frame) {
        if (!frame.hasSessionId() || !frame.getSessionId().equals(core.wireSessionId())) {
            core.mismatchDropped();
            return Optional.empty(); // SES-6: dropped and counted, never applied
        }
        MembershipView view = core.peer.membership().get();
        if (view == null || !view.valid()) {
            return Optional.of(new Refusal(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote admission"));
        }
        if (!view.isAdmitted(core.requester())) {
            return Optional.of(new Refusal(ErrorCause.UNKNOWN_REQUESTER_INCARNATION,
                    "requester " + core.requester() + " is no longer admitted"));
        }
        return switch (frame.getBodyCase()) {
            case ACK -> core.onAck(frame.getAck());
            case FLUSH_THROUGH -> onFlushThrough(core, frame.getFlushThrough().getTargetSequence());
            case RESUME_FROM -> onRegenerate(core, "resume_from", frame.getResumeFrom().hasViewId(),
                    frame.getResumeFrom().getViewId(), frame.getResumeFrom().getAppliedCursor());
            case NEED_REPAIR -> onRegenerate(core, "need_repair", frame.getNeedRepair().hasViewId(),
                    frame.getNeedRepair().getViewId(), frame.getNeedRepair().getAppliedCursor());
            case ERROR -> {
                core.closing("requester sent Error " + frame.getError().getCause());
                yield Optional.empty();
            }
            case OPEN -> Optional.of(new Refusal(ErrorCause.MALFORMED_FRAME, "a second Open in one session"));
            case BODY_NOT_SET -> Optional.of(new Refusal(ErrorCause.MALFORMED_FRAME, "requester frame without a body"));
        };
    }

    /** PUB-4, API-2: expose everything through the target promptly. */
    private static Optional<Refusal> onFlushThrough(SourceCore core, long target) {
        FrameCheck c = new FrameCheck();
        long t = c.nonNegative("flush_through.target_sequence", target);
        if (!c.ok()) {
            return c.refusal();
        }
        core.flushTarget = Math.max(core.flushTarget, t);
        core.barrier(t); // ROUTE-10: the session's send work is favoured until the target is sent
        core.emit(new SourceCore.Effect.Wake());
        return Optional.empty();
    }

    /** DELTA-8/DELTA-9/DELTA-10: regenerate from the receiver's applied cursor, never above what was sent on that view. */
    private static Optional<Refusal> onRegenerate(SourceCore core, String body, boolean hasView, Uuid wireView, long appliedCursor) {
        FrameCheck c = new FrameCheck();
        UUID viewId = c.uuid(body + ".view_id", hasView, wireView);
        long applied = c.nonNegative(body + ".applied_cursor", appliedCursor);
        if (!c.ok()) {
            return c.refusal();
        }
        Optional<Position> at = core.state().position();
        if (at.isPresent() && at.get().view().equals(viewId) && applied > at.get().cursor()) {
            return Optional.of(new Refusal(ErrorCause.MALFORMED_FRAME,
                    "applied_cursor " + applied + " is above the cursor sent (" + at.get().cursor() + ")"));
        }
        core.regenerate = new InstalledCursor(viewId, applied);
        core.emit(new SourceCore.Effect.Wake());
        return Optional.empty();
    }
}
