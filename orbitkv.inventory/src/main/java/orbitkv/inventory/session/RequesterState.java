package orbitkv.inventory.session;

import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.wire.ErrorCause;

/**
 * The requester end of one directed session as an explicit state machine (SES-6, SNAP-6..SNAP-10,
 * DELTA-7..DELTA-10). One machine per source incarnation spans its successive streams; every stream state
 * names its stream (the random session id of its Open), so an event of a replaced stream is
 * {@link Outcome.Ignored} instead of touching the current one (SES-6).
 *
 * <pre>
 *   Idle | BackingOff --Connect(stream, resume)------------------> Opening(stream, resume)
 *   Idle | BackingOff --BackOff----------------------------------> BackingOff       (not admitted: wait, retry)
 *   Opening --Accepted(resumed)----------------------------------> Streaming(stream, resume.view)   (SNAP-8)
 *   Opening --Accepted(bootstrap)--------------------------------> AwaitingSnapshot(stream)
 *   AwaitingSnapshot | Streaming | Staging --Begun(view)----------> Staging(stream, view, installed kept)
 *   Staging(view) --Installed(view)------------------------------> Streaming(stream, view)          (SNAP-5)
 *   Staging --CommitRejected-------------------------------------> Streaming(installed) | AwaitingSnapshot
 *   any stream state --Ended(stream)-----------------------------> BackingOff      (staging discarded, SNAP-10)
 *   any but Stopped --Stop---------------------------------------> Stopped         (terminal)
 * </pre>
 *
 * {@link #next} is the one transition function. A frame the source may not send in the current state is
 * {@link Outcome.Refused} with its wire cause (the peer's error); an event this package must never produce
 * in that state throws {@link IllegalStateException} naming the edge (our error). Deltas go to
 * {@link #deltaTarget()}: the staging view while one exists, else the installed view, never a view that
 * only staging credit acknowledged (SNAP-6, SNAP-8).
 */
sealed interface RequesterState permits RequesterState.Idle, RequesterState.BackingOff, RequesterState.Opening,
        RequesterState.AwaitingSnapshot, RequesterState.Staging, RequesterState.Streaming, RequesterState.Stopped {

    /** No stream yet. */
    record Idle() implements RequesterState {}

    /** Between streams: the reconnect backoff runs, or the source is not admitted. */
    record BackingOff() implements RequesterState {}

    /** The Open of {@code stream} is sent; {@code resume} is the installed cursor it offered (SNAP-8). */
    record Opening(UUID stream, Optional<InstalledCursor> resume) implements RequesterState {}

    /** The source accepted {@code stream} in bootstrap mode; no snapshot has begun. */
    record AwaitingSnapshot(UUID stream) implements RequesterState {}

    /**
     * Snapshot pages and replay go to the hidden {@code staging} view (SNAP-1, SNAP-6); an older
     * {@code installed} view stays installed until the commit (SNAP-11).
     */
    record Staging(UUID stream, UUID staging, long begunNanos, Optional<UUID> installed) implements RequesterState {}

    /** Deltas apply to the installed view {@code installed}. */
    record Streaming(UUID stream, UUID installed) implements RequesterState {}

    /** Stopped for good (member removed, fenced, shut down). */
    record Stopped() implements RequesterState {}

    /** The inputs of the machine. */
    sealed interface Event permits Connect, BackOff, Accepted, Begun, Installed, CommitRejected, Ended, Stop {}

    record Connect(UUID stream, Optional<InstalledCursor> resume) implements Event {}

    record BackOff() implements Event {}

    /** OpenAccepted of {@code stream}; {@code resumed} is its mode. */
    record Accepted(UUID stream, boolean resumed) implements Event {}

    /** SnapshotBegin of {@code view}, accepted by the receiver (SNAP-1). */
    record Begun(UUID stream, UUID view, long nowNanos) implements Event {}

    /** The receiver installed {@code view} at its commit (SNAP-5). */
    record Installed(UUID stream, UUID view) implements Event {}

    /** The receiver refused the commit and discarded the staging attempt (SNAP-7). */
    record CommitRejected(UUID stream) implements Event {}

    /** {@code stream} ended (either side, or the transport). */
    record Ended(UUID stream) implements Event {}

    record Stop() implements Event {}

    /** What an event did. */
    sealed interface Outcome permits Outcome.Moved, Outcome.Refused, Outcome.Ignored {
        record Moved(RequesterState to) implements Outcome {}

        /** The source broke the protocol: the stream fails with this cause. */
        record Refused(Refusal refusal) implements Outcome {}

        /** An event of a stream that is no longer current, or after Stopped: it changes nothing (SES-6). */
        record Ignored() implements Outcome {}
    }

    /** The one transition function. */
    static Outcome next(RequesterState from, Event event) {
        Objects.requireNonNull(event, "event");
        if (from instanceof Stopped) {
            return new Outcome.Ignored();
        }
        if (event instanceof Stop) {
            return moved(new Stopped());
        }
        Optional<UUID> stream = from.streamId();
        Optional<UUID> eventStream = streamOf(event);
        if (eventStream.isPresent() && !eventStream.equals(stream)) {
            return new Outcome.Ignored();
        }
        Outcome out = switch (from) {
            case Idle i -> disconnected(event);
            case BackingOff b -> disconnected(event);
            case Opening o -> switch (event) {
                case Accepted a when a.resumed() && o.resume().isEmpty() ->
                        refused(ErrorCause.MALFORMED_FRAME, "resumed without a resume point");
                case Accepted a when a.resumed() -> moved(new Streaming(o.stream(), o.resume().get().viewId()));
                case Accepted a -> moved(new AwaitingSnapshot(o.stream()));
                case Begun b -> refused(ErrorCause.MALFORMED_FRAME, "first source frame must be OpenAccepted, got SNAPSHOT_BEGIN");
                case Ended e -> moved(new BackingOff());
                default -> null;
            };
            case AwaitingSnapshot a -> switch (event) {
                case Begun b -> moved(new Staging(a.stream(), b.view(), b.nowNanos(), Optional.empty()));
                case Accepted x -> refused(ErrorCause.MALFORMED_FRAME, "a second OpenAccepted");
                case Ended e -> moved(new BackingOff());
                default -> null;
            };
            case Staging s -> switch (event) {
                case Begun b -> moved(new Staging(s.stream(), b.view(), b.nowNanos(), s.installed()));
                case Installed i when i.view().equals(s.staging()) -> moved(new Streaming(s.stream(), i.view()));
                case CommitRejected c -> moved(s.installed().<RequesterState>map(v -> new Streaming(s.stream(), v))
                        .orElseGet(() -> new AwaitingSnapshot(s.stream())));
                case Accepted x -> refused(ErrorCause.MALFORMED_FRAME, "a second OpenAccepted");
                case Ended e -> moved(new BackingOff());
                default -> null;
            };
            case Streaming s -> switch (event) {
                case Begun b -> moved(new Staging(s.stream(), b.view(), b.nowNanos(), Optional.of(s.installed())));
                case Accepted x -> refused(ErrorCause.MALFORMED_FRAME, "a second OpenAccepted");
                case Ended e -> moved(new BackingOff());
                default -> null;
            };
            case Stopped s -> new Outcome.Ignored();
        };
        if (out == null) {
            throw new IllegalStateException("requester session state machine: illegal edge " + from + " --" + event + "--> ");
        }
        return out;
    }

    private static Outcome disconnected(Event event) {
        return switch (event) {
            case Connect c -> moved(new Opening(c.stream(), c.resume()));
            case BackOff b -> moved(new BackingOff());
            default -> null;
        };
    }

    private static Outcome moved(RequesterState to) {
        return new Outcome.Moved(to);
    }

    private static Outcome refused(ErrorCause cause, String detail) {
        return new Outcome.Refused(new Refusal(cause, detail));
    }

    private static Optional<UUID> streamOf(Event e) {
        return switch (e) {
            case Connect c -> Optional.empty(); // a new stream: checked against a disconnected state instead
            case BackOff b -> Optional.empty();
            case Accepted a -> Optional.of(a.stream());
            case Begun b -> Optional.of(b.stream());
            case Installed i -> Optional.of(i.stream());
            case CommitRejected c -> Optional.of(c.stream());
            case Ended x -> Optional.of(x.stream());
            case Stop s -> Optional.empty();
        };
    }

    /** The stream this state belongs to, if it is a stream state. */
    default Optional<UUID> streamId() {
        return switch (this) {
            case Opening o -> Optional.of(o.stream());
            case AwaitingSnapshot a -> Optional.of(a.stream());
            case Staging s -> Optional.of(s.stream());
            case Streaming s -> Optional.of(s.stream());
            case Idle i -> Optional.empty();
            case BackingOff b -> Optional.empty();
            case Stopped s -> Optional.empty();
        };
    }

    /** True once the source accepted the stream (its first frame, SES-4). */
    default boolean accepted() {
        return this instanceof AwaitingSnapshot || this instanceof Staging || this instanceof Streaming;
    }

    /** The view deltas apply to: staging while it exists (SNAP-6), else the installed view; none before either. */
    default Optional<UUID> deltaTarget() {
        return switch (this) {
            case Staging s -> Optional.of(s.staging());
            case Streaming s -> Optional.of(s.installed());
            default -> Optional.empty();
        };
    }

    /** The status state (DIAG-1). */
    default SubscriptionStatus.State status() {
        return switch (this) {
            case Idle i -> SubscriptionStatus.State.CONNECTING;
            case Opening o -> SubscriptionStatus.State.CONNECTING;
            case AwaitingSnapshot a -> SubscriptionStatus.State.BOOTSTRAPPING;
            case Staging s -> SubscriptionStatus.State.BOOTSTRAPPING;
            case Streaming s -> SubscriptionStatus.State.STREAMING;
            case BackingOff b -> SubscriptionStatus.State.BACKING_OFF;
            case Stopped s -> SubscriptionStatus.State.CLOSED;
        };
    }
}
