package orbitkv.inventory.session;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.ViewReceiver;
import orbitkv.inventory.codec.SourceFrameDecoder;
import orbitkv.inventory.wire.Ack;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.FlushThrough;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.ResumePoint;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;

/**
 * The requester end of one directed session to one source incarnation as a sans-I/O core (issue 38): the
 * {@link RequesterState} machine, the receive checks ({@link FrameCheck}, stream identity SES-6, the frame-number
 * gap check SES-12, membership SES-5), the view application through the injected {@link ViewReceiver}, the ACK
 * cadence (DELTA-12, SES-13, SES-14) and the receive deadline (DELTA-13, IDX-12). It owns no thread, socket,
 * timer or clock: every input carries the caller's time ({@code nowNanos}), every step returns its
 * {@link Effect}s, and {@link #deadlineNanos()} says when {@link #onTimer} is due next. The gRPC shell
 * ({@link RequesterSession}) and the simulator ({@code ProtocolSimulator}) drive the same instance type.
 *
 * <p>Not thread-safe: the caller serializes every step method. Only {@link #noteArrival} (a transport thread:
 * bytes of a message arrived) and the status readers may run concurrently; they touch volatile fields only.
 */
final class RequesterCore {
    /**
     * Liveness intervals without any source frame after which a stream is dead and replaced (DELTA-13, IDX-12).
     * Three: one interval late is scheduling noise; the freshness budget must exceed the liveness interval (BND-6).
     */
    static final int SILENT_LIVENESS_INTERVALS_MAX = 3;
    /** The status cause of a stream replaced for silence (not a wire cause: nothing reached the source). */
    static final String RECEIVE_SILENCE_CAUSE = "RECEIVE_SILENCE";

    /**
     * Seeded bugs of the simulator (issue 38 item 4): each switches off one production check. Package-private and
     * set only by {@code ProtocolSimulator} through {@link #fault}; no Manager option or public type reaches it.
     */
    enum Fault {
        /** Skip the frame-number gap check (SES-12). */
        SKIP_GAP_CHECK,
        /** Return credit for one frame more than consumed (SES-13). */
        CREDIT_OFF_BY_ONE,
        /** ACK a frame as it is received, before it is applied (SES-13, DELTA-12). */
        ACK_BEFORE_APPLY,
        /** Act on a frame of a stream this requester already replaced (SES-6). */
        INSTALL_REPLACED_SESSION_FRAME
    }

    /** What a step asks the shell to do, in order. */
    sealed interface Effect {
        /** The stream the effect concerns. */
        UUID stream();

        /** Send {@code frame} on {@code stream}. */
        record Send(UUID stream, RequesterFrame frame) implements Effect {}

        /** End {@code stream}: send {@code Error(error)} if present, then half-close. */
        record Close(UUID stream, Optional<Refusal> error) implements Effect {}

        /** {@code stream} went silent: cancel the call and drop its connection (nothing can be said on it). */
        record Abandon(UUID stream, String detail) implements Effect {}

        /** {@code stream} is over; {@code progressed} when it applied anything (the connect loop resets its backoff). */
        record Ended(UUID stream, boolean progressed) implements Effect {}
    }

    /** The fixed facts of one session: who talks to whom, in which scope, and where views go. */
    record Peer(ClusterIdentity cluster, Incarnation self, Incarnation source, Scope scope, SessionConfig config,
            ViewReceiver receiver, RequesterCounters metrics, Supplier<MembershipView> membership) {}

    final Peer peer;
    /** The seeded bug of a simulator run; null in production (issue 38 item 4). */
    Fault fault;

    private volatile RequesterState state = new RequesterState.Idle();
    private volatile Rx current;
    private volatile String lastErrorCause = "";
    private volatile long connects;
    private volatile long installs;
    private boolean limitRefused;
    private List<Effect> out = new ArrayList<>();
    private final RequesterFrames frames;

    RequesterCore(Peer peer) {
        this.peer = peer;
        this.frames = new RequesterFrames(this);
    }

    /** One stream's receive bookkeeping (SES-6: one random session id per stream). */
    static final class Rx {
        final UUID id;
        final Uuid wire;
        long lastFrame;
        long consumedThrough;
        long ackedThrough;
        long pendingBytes;
        /** When the ACK timer is due, or -1 when none is armed (DELTA-12). */
        long ackDueNanos = -1;
        long repairRequestedAt = -1;
        boolean progressed;
        /** When the stream opened, bytes of a message last arrived, or a message last finished applying. */
        volatile long lastInboundNanos;

        Rx(UUID id, long nowNanos) {
            this.id = id;
            this.wire = Wire.uuid(id);
            this.lastInboundNanos = nowNanos;
        }
    }

    // ---------------------------------------------------------------- status (any thread)

    RequesterState state() {
        return state;
    }

    long connects() {
        return connects;
    }

    long installs() {
        return installs;
    }

    String lastErrorCause() {
        return lastErrorCause;
    }

    /** The current stream's id, if one is open. */
    Optional<UUID> currentStream() {
        Rx c = current;
        return c == null ? Optional.empty() : Optional.of(c.id);
    }

    // ---------------------------------------------------------------- inputs

    /**
     * SES-5: opens stream {@code stream} while both incarnations are admitted ({@code admitted}), resuming only
     * from the receiver's installed cursor {@code resume} (SNAP-8); else the session backs off.
     */
    List<Effect> connect(long nowNanos, UUID stream, Optional<InstalledCursor> resume, boolean admitted) {
        if (state instanceof RequesterState.Stopped) {
            return drain();
        }
        move(admitted ? new RequesterState.Connect(stream, resume) : new RequesterState.BackOff());
        if (admitted) {
            Rx rx = new Rx(stream, nowNanos);
            current = rx;
            connects++;
            emit(new Effect.Send(stream, RequesterFrame.newBuilder().setSessionId(rx.wire).setOpen(open(rx, resume)).build()));
        }
        return drain();
    }

    private Open.Builder open(Rx rx, Optional<InstalledCursor> resume) {
        Open.Builder open = Open.newBuilder().setProtocol(ClusterIdentity.PROTOCOL)
                .setClusterUuid(Wire.uuid(peer.cluster().uuid())).setSource(Wire.ref(peer.source()))
                .setRequester(Wire.ref(peer.self())).setScope(Wire.scopeSpec(peer.scope()))
                .setScopeDigest(ByteString.copyFrom(peer.scope().digest().bytes())).setSessionId(rx.wire)
                .setReceiveWindowBytes(peer.config().receiveWindowBytes());
        resume.ifPresent(c -> open.setResume(ResumePoint.newBuilder().setViewId(Wire.uuid(c.viewId()))
                .setAppliedCursor(c.watermark())));
        return open;
    }

    /** Bytes of a message of {@code stream} arrived (any thread, lock-free): a receiving stream is not silent. */
    void noteArrival(UUID stream, long nowNanos) {
        Rx c = current;
        if (c != null && c.id.equals(stream)) {
            c.lastInboundNanos = nowNanos;
        }
    }

    /** One received message of {@code stream}: checked, applied, acknowledged after application (DELTA-12). */
    List<Effect> onFrame(UUID stream, long nowNanos, Inbound<SourceFrame> in) {
        Rx rx = current;
        boolean isCurrent = rx != null && rx.id.equals(stream) && state.streamId().equals(Optional.of(stream));
        if (!isCurrent && !(fault == Fault.INSTALL_REPLACED_SESSION_FRAME && rx != null)) {
            return drain(); // SES-6: a message of a replaced stream changes nothing
        }
        rx.lastInboundNanos = nowNanos;
        Optional<Refusal> refusal;
        try {
            refusal = switch (in) {
                case Inbound.Oversized<SourceFrame> o -> Optional.of(new Refusal(ErrorCause.FRAME_TOO_LARGE, "source frame of "
                        + o.encodedBytes() + " bytes exceeds frameEncodedBytesMax (" + o.boundBytes() + ")"));
                case Inbound.Unparseable<SourceFrame> u -> Optional.of(new Refusal(ErrorCause.MALFORMED_FRAME, "unparseable frame: " + u.detail()));
                case Inbound.Parsed<SourceFrame> p -> received(rx, nowNanos, p.message(), p.encodedBytes(), null);
                case Inbound.Read r -> received(rx, nowNanos, r.frame().header(), r.encodedBytes(), r.frame());
            };
        } catch (RuntimeException e) { // a bug (an illegal edge of the machine): the stream ends with INTERNAL
            refusal = Optional.of(new Refusal(ErrorCause.INTERNAL, e.toString()));
        }
        rx.lastInboundNanos = nowNanos;
        refusal.ifPresent(r -> fail(rx, r, ResetCause.PROTOCOL_ERROR));
        return drain();
    }

    /** The receive checks of one frame (SES-6, SES-12, SES-5), then its application and its credit. */
    private Optional<Refusal> received(Rx rx, long nowNanos, SourceFrame f, int encodedBytes, SourceFrameDecoder.Result.Read read) {
        peer.metrics().framesReceived.inc(f.getBodyCase());
        peer.metrics().encodedBytes.add(encodedBytes);
        if (!f.getSessionId().equals(rx.wire) && fault != Fault.INSTALL_REPLACED_SESSION_FRAME) {
            peer.metrics().sessionMismatchDrops.increment();
            return Optional.empty(); // SES-6: a frame of another session never touches this one
        }
        FrameCheck c = new FrameCheck();
        long n = c.nonNegative("frame_number", f.getFrameNumber());
        if (!c.ok()) {
            return c.refusal();
        }
        if (n != rx.lastFrame + 1 && fault != Fault.SKIP_GAP_CHECK) {
            return Optional.of(new Refusal(ErrorCause.FRAME_OUT_OF_ORDER, "frame " + n + " after frame " + rx.lastFrame));
        }
        rx.lastFrame = n;
        if (f.hasError()) {
            sourceError(rx, f);
            return Optional.empty();
        }
        MembershipView view = peer.membership().get();
        if (view == null || !view.valid()) {
            return Optional.of(new Refusal(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote frame is admitted"));
        }
        if (!view.isAdmitted(peer.source())) {
            return Optional.of(new Refusal(ErrorCause.UNKNOWN_SOURCE_INCARNATION, "source " + peer.source() + " is not admitted"));
        }
        if (fault == Fault.ACK_BEFORE_APPLY) {
            consumed(rx, nowNanos, n, encodedBytes, true);
        }
        return switch (frames.handle(rx, nowNanos, f, n, read)) {
            case RequesterFrames.Handled.Refused r -> Optional.of(r.refusal());
            case RequesterFrames.Handled.Done d -> {
                if (fault != Fault.ACK_BEFORE_APPLY) {
                    consumed(rx, nowNanos, n, d.charged() ? encodedBytes : 0, false);
                }
                yield Optional.empty();
            }
        };
    }

    private void sourceError(Rx rx, SourceFrame f) {
        lastErrorCause = f.getError().getCause().name();
        if (f.getError().getCause() == ErrorCause.SESSION_LIMIT) {
            limitRefused = true; // BND-3: the shell logs the episode once
        }
        end(rx, ResetCause.DISCONNECT, Optional.empty());
    }

    /** True once after the source refused with SESSION_LIMIT and then accepted again (for the shell's log). */
    boolean limitRefused() {
        return limitRefused;
    }

    void acceptedAgain() {
        limitRefused = false;
    }

    /** When {@link #onTimer} is due next (the ACK timer or the receive deadline), or {@code Long.MAX_VALUE}. */
    long deadlineNanos() {
        Rx rx = current;
        if (rx == null || !state.streamId().equals(Optional.of(rx.id))) {
            return Long.MAX_VALUE;
        }
        long silence = rx.lastInboundNanos + silenceMaxNanos();
        return rx.ackDueNanos >= 0 ? Math.min(rx.ackDueNanos, silence) : silence;
    }

    long silenceMaxNanos() {
        return TimeUnit.MILLISECONDS.toNanos(peer.config().livenessIntervalMs()) * SILENT_LIVENESS_INTERVALS_MAX;
    }

    /** Time passed: the ACK timer (DELTA-12) and the receive deadline (DELTA-13, IDX-12) fire when due, not before. */
    List<Effect> onTimer(long nowNanos) {
        Rx rx = current;
        if (rx == null || !state.streamId().equals(Optional.of(rx.id))) {
            return drain();
        }
        if (rx.ackDueNanos >= 0 && nowNanos >= rx.ackDueNanos) {
            rx.ackDueNanos = -1;
            if (rx.consumedThrough > rx.ackedThrough) {
                ack(rx);
            }
        }
        long silent = nowNanos - rx.lastInboundNanos;
        if (silent >= silenceMaxNanos()) {
            lastErrorCause = RECEIVE_SILENCE_CAUSE;
            RequesterState left = state;
            rx.ackDueNanos = -1;
            move(new RequesterState.Ended(rx.id));
            emit(new Effect.Abandon(rx.id, "no source frame for " + TimeUnit.NANOSECONDS.toMillis(silent) + " ms"));
            ended(rx, left, ResetCause.DISCONNECT);
        }
        return drain();
    }

    /** The transport ended {@code stream} without an error of ours (the source's half-close, a reset, a cancel). */
    List<Effect> onStreamEnd(UUID stream, Optional<String> transportCause) {
        Rx rx = current;
        if (rx != null && rx.id.equals(stream) && state.streamId().equals(Optional.of(stream))) {
            transportCause.ifPresent(c -> lastErrorCause = c);
            end(rx, ResetCause.DISCONNECT, Optional.empty());
        }
        return drain();
    }

    /** PUB-4, API-5: asks the source to expose everything through {@code target}; empty when no stream is accepted. */
    List<Effect> flushThrough(long target) {
        Rx rx = current;
        if (rx != null && state.accepted() && state.streamId().equals(Optional.of(rx.id))) {
            send(rx, RequesterFrame.newBuilder().setSessionId(rx.wire)
                    .setFlushThrough(FlushThrough.newBuilder().setTargetSequence(target)).build());
        }
        return drain();
    }

    /** Stops for good: closes the stream with {@code cause} and discards staging (SNAP-10). */
    List<Effect> stop(ErrorCause cause, ResetCause reset) {
        RequesterState left = state;
        if (!(RequesterState.next(left, new RequesterState.Stop()) instanceof RequesterState.Outcome.Moved m)) {
            return drain(); // already stopped
        }
        state = m.to();
        Rx rx = current;
        current = null;
        if (rx != null && left.streamId().equals(Optional.of(rx.id))) {
            close(rx, Optional.of(new Refusal(cause, "requester stopped the session")));
            emit(new Effect.Ended(rx.id, rx.progressed));
        }
        if (left instanceof RequesterState.Staging) {
            peer.metrics().resets.inc(reset);
        }
        peer.receiver().discardStaging(peer.source(), reset); // SNAP-10; idempotent
        return drain();
    }

    // ---------------------------------------------------------------- ACK cadence (DELTA-12, SES-13, SES-14)

    private void consumed(Rx rx, long nowNanos, long frame, int dataBytes, boolean now) {
        rx.consumedThrough = frame;
        if (dataBytes == 0 && rx.pendingBytes == 0) {
            return; // no credit outstanding: idle sessions send no empty ACK loops
        }
        rx.pendingBytes += dataBytes;
        if (now || rx.pendingBytes >= peer.config().receiveWindowBytes() / 2) {
            ack(rx);
        } else if (rx.ackDueNanos < 0) {
            rx.ackDueNanos = nowNanos + TimeUnit.MILLISECONDS.toNanos(peer.config().ackIntervalMs());
        }
    }

    /** The view id comes from the same state the frame handlers moved, so it is never torn. */
    private void ack(Rx rx) {
        long applied = peer.receiver().installedCursor(peer.source()).map(InstalledCursor::watermark).orElse(0L);
        long through = fault == Fault.CREDIT_OFF_BY_ONE ? rx.consumedThrough + 1 : rx.consumedThrough;
        Ack.Builder ack = Ack.newBuilder().setConsumedThroughFrame(through).setAppliedCursor(applied);
        state.deltaTarget().ifPresent(view -> ack.setViewId(Wire.uuid(view)));
        rx.ackedThrough = rx.consumedThrough;
        rx.pendingBytes = 0;
        rx.ackDueNanos = -1;
        send(rx, RequesterFrame.newBuilder().setSessionId(rx.wire).setAck(ack).build());
    }

    // ---------------------------------------------------------------- helpers for RequesterFrames

    /** Applies {@code event} to the machine; a refusal or an ignored event comes back unchanged. */
    RequesterState.Outcome move(RequesterState.Event event) {
        RequesterState.Outcome o = RequesterState.next(state, event);
        if (o instanceof RequesterState.Outcome.Moved m) {
            state = m.to();
        }
        return o;
    }

    void installed() {
        installs++;
    }

    void send(Rx rx, RequesterFrame f) {
        peer.metrics().framesSent.inc(f.getBodyCase());
        emit(new Effect.Send(rx.id, f));
    }

    /** Sends {@code Error(r)} and ends the stream; staging is discarded (SNAP-10). */
    void fail(Rx rx, Refusal r, ResetCause reset) {
        end(rx, reset, Optional.of(r));
    }

    private void end(Rx rx, ResetCause reset, Optional<Refusal> error) {
        if (!state.streamId().equals(Optional.of(rx.id))) {
            return;
        }
        RequesterState left = state;
        close(rx, error);
        move(new RequesterState.Ended(rx.id));
        ended(rx, left, reset);
    }

    private void close(Rx rx, Optional<Refusal> error) {
        rx.ackDueNanos = -1;
        error.ifPresent(r -> {
            lastErrorCause = r.cause().name();
            peer.metrics().rejections.inc(r.cause());
            peer.metrics().framesSent.inc(RequesterFrame.BodyCase.ERROR);
        });
        emit(new Effect.Close(rx.id, error));
    }

    private void ended(Rx rx, RequesterState left, ResetCause reset) {
        if (left instanceof RequesterState.Staging) {
            peer.metrics().resets.inc(reset);
            peer.receiver().discardStaging(peer.source(), reset);
        }
        emit(new Effect.Ended(rx.id, rx.progressed));
    }

    private void emit(Effect e) {
        out.add(e);
    }

    private List<Effect> drain() {
        if (out.isEmpty()) {
            return List.of();
        }
        List<Effect> d = out;
        out = new ArrayList<>();
        return d;
    }
}
