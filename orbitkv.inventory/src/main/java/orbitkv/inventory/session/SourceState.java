package orbitkv.inventory.session;

import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.SourceSessionStatus.Phase;

/**
 * The source end of one session as an explicit state machine (SES-12, SNAP-1..SNAP-5, SNAP-8, DELTA-10):
 *
 * <pre>
 *   Opening --Accepted(resumed)--------------------------------------------> Streaming(view, cursor)
 *   Opening --Accepted(bootstrap)------------------------------------------> Bootstrapping(none)
 *   Bootstrapping --Committed(view, S1)------------------------------------> Streaming(view, S1)
 *   Streaming --Advanced((cursor, to])-------------------------------------> Streaming(view, to)
 *   Streaming --Regenerated(applied <= cursor)-----------------------------> Streaming(view, applied)
 *   Streaming --Rebootstrap------------------------------------------------> Bootstrapping(previous position)
 *   Opening | Bootstrapping | Streaming --Closed(reason)-------------------> Closed(reason)   (terminal)
 * </pre>
 *
 * {@link #next} is the one transition function; an event that is not an edge from the current state is a
 * bug of the caller and throws {@link IllegalStateException} naming the edge. A requester's bad input never
 * reaches it: the inbound side refuses such frames first. The position a session streams from (view id and
 * the journal cursor sent through) exists only in {@link Streaming}, so a cursor without a committed view,
 * or a commit without a bootstrap, cannot be represented.
 */
sealed interface SourceState permits SourceState.Opening, SourceState.Bootstrapping, SourceState.Streaming,
        SourceState.Closed {

    /** A committed view of this incarnation and the journal cursor sent through on it. */
    record Position(UUID view, long cursor) {
        public Position {
            Objects.requireNonNull(view, "view");
            if (cursor < 0) {
                throw new IllegalArgumentException("cursor must be >= 0, got " + cursor);
            }
        }
    }

    /** Before the Open is checked and the session admitted. */
    record Opening() implements SourceState {}

    /**
     * Snapshot attempts run (SNAP-1..SNAP-4): no cursor is sent from until one commits.
     *
     * @param previous the position streamed before this bootstrap, if any (a requester may still name it)
     */
    record Bootstrapping(Optional<Position> previous) implements SourceState {}

    /** Deltas stream from {@code at} (DELTA-1..DELTA-3). */
    record Streaming(Position at) implements SourceState {}

    /** Ended for good; {@code reason} is the wire cause sent, or why the stream ended quietly. */
    record Closed(String reason) implements SourceState {}

    /** The inputs of the machine. */
    sealed interface Event permits Accepted, Committed, Advanced, Regenerated, Rebootstrap, Close {}

    /** The Open was admitted; {@code resumed} is the requester's position when it may resume (SNAP-8). */
    record Accepted(Optional<Position> resumed) implements Event {}

    /** A snapshot committed view {@code at.view()} at {@code at.cursor()} = S1 (SNAP-5). */
    record Committed(Position at) implements Event {}

    /** A delta of {@code sent} went out: it must start at the cursor (INV-4: contiguous coverage). */
    record Advanced(Interval sent) implements Event {}

    /** A requester asked to regenerate its committed view from {@code applied} (DELTA-8, DELTA-9, DELTA-10). */
    record Regenerated(long applied) implements Event {}

    /** The needed history is gone or the requester named another view: a new snapshot (DELTA-10, BND-4). */
    record Rebootstrap() implements Event {}

    /** The session ends. */
    record Close(String reason) implements Event {}

    /** The one transition function. */
    static SourceState next(SourceState from, Event event) {
        SourceState to = switch (from) {
            case Opening o -> switch (event) {
                case Accepted a -> a.resumed().<SourceState>map(Streaming::new).orElseGet(() -> new Bootstrapping(Optional.empty()));
                case Close c -> new Closed(c.reason());
                default -> null;
            };
            case Bootstrapping b -> switch (event) {
                case Committed c -> new Streaming(c.at());
                case Close c -> new Closed(c.reason());
                default -> null;
            };
            case Streaming s -> switch (event) {
                case Advanced a when a.sent().from() == s.at().cursor() -> new Streaming(new Position(s.at().view(), a.sent().to()));
                case Regenerated r when r.applied() >= 0 && r.applied() <= s.at().cursor() ->
                        new Streaming(new Position(s.at().view(), r.applied()));
                case Rebootstrap r -> new Bootstrapping(Optional.of(s.at()));
                case Close c -> new Closed(c.reason());
                default -> null;
            };
            case Closed c -> null;
        };
        if (to == null) {
            throw new IllegalStateException("source session state machine: illegal edge " + from + " --" + event + "--> ");
        }
        return to;
    }

    /**
     * DELTA-10: what a regeneration request means for a streaming session: the same committed view from a
     * cursor the journal still holds regenerates from there; any other view, or a cursor already trimmed,
     * needs a new snapshot. The inbound side has already refused a cursor above the one sent.
     */
    static Event onRegenerationRequest(Streaming s, InstalledCursor request, long oldestRetained) {
        return request.viewId().equals(s.at().view()) && request.watermark() >= oldestRetained - 1
                && request.watermark() <= s.at().cursor()
                ? new Regenerated(request.watermark()) : new Rebootstrap();
    }

    /** The position a requester may still name: streaming's, or the one before a bootstrap. */
    default Optional<Position> position() {
        return switch (this) {
            case Streaming s -> Optional.of(s.at());
            case Bootstrapping b -> b.previous();
            case Opening o -> Optional.empty();
            case Closed c -> Optional.empty();
        };
    }

    /** The status phase (DIAG-1). */
    default Phase phase() {
        return switch (this) {
            case Opening o -> Phase.OPENING;
            case Bootstrapping b -> Phase.BOOTSTRAPPING;
            case Streaming s -> Phase.STREAMING;
            case Closed c -> Phase.CLOSED;
        };
    }
}
