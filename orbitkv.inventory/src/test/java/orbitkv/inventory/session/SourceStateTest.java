package orbitkv.inventory.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.session.SourceState.Accepted;
import orbitkv.inventory.session.SourceState.Advanced;
import orbitkv.inventory.session.SourceState.Bootstrapping;
import orbitkv.inventory.session.SourceState.Close;
import orbitkv.inventory.session.SourceState.Closed;
import orbitkv.inventory.session.SourceState.Committed;
import orbitkv.inventory.session.SourceState.Event;
import orbitkv.inventory.session.SourceState.Opening;
import orbitkv.inventory.session.SourceState.Position;
import orbitkv.inventory.session.SourceState.Rebootstrap;
import orbitkv.inventory.session.SourceState.Regenerated;
import orbitkv.inventory.session.SourceState.Streaming;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The source end's state machine on its own: the edge table of {@link SourceState#next}, every (state,
 * event) pair with its expected target or "illegal", and the regeneration decision (DELTA-10).
 */
@Tag("unit")
class SourceStateTest {
    static final UUID V = new UUID(1, 1);
    static final UUID W = new UUID(2, 2);
    static final Position V_AT_10 = new Position(V, 10);

    static final Opening OPENING = new Opening();
    static final Bootstrapping FIRST_BOOTSTRAP = new Bootstrapping(Optional.empty());
    static final Bootstrapping REBOOTSTRAP = new Bootstrapping(Optional.of(V_AT_10));
    static final Streaming STREAMING = new Streaming(V_AT_10);
    static final Closed CLOSED = new Closed("FENCED");

    static final Accepted RESUMED = new Accepted(Optional.of(new Position(V, 5)));
    static final Accepted BOOTSTRAP = new Accepted(Optional.empty());
    static final Committed COMMITTED = new Committed(new Position(W, 20));
    static final Advanced CONTIGUOUS = new Advanced(new Interval(10, 15));
    static final Advanced GAP = new Advanced(new Interval(11, 15));
    static final Regenerated BELOW_SENT = new Regenerated(7);
    static final Regenerated ABOVE_SENT = new Regenerated(11);
    static final Rebootstrap REBOOT = new Rebootstrap();
    static final Close CLOSE = new Close("SHUTTING_DOWN");

    /** One edge-table row: {@code to} null means illegal. */
    record Row(String rule, SourceState from, Event event, SourceState to) {
        @Override
        public String toString() {
            return rule + ": " + from + " --" + event + "--> " + (to == null ? "illegal" : to);
        }
    }

    static final List<SourceState> STATES = List.of(OPENING, FIRST_BOOTSTRAP, REBOOTSTRAP, STREAMING, CLOSED);
    static final List<Event> EVENTS = List.of(RESUMED, BOOTSTRAP, COMMITTED, CONTIGUOUS, GAP, BELOW_SENT, ABOVE_SENT, REBOOT, CLOSE);

    static final List<Row> TABLE = List.of(
            new Row("SNAP-8 resume a committed view", OPENING, RESUMED, new Streaming(new Position(V, 5))),
            new Row("SNAP-1 no resumable view: bootstrap", OPENING, BOOTSTRAP, FIRST_BOOTSTRAP),
            new Row("SNAP-5 a commit needs a bootstrap", OPENING, COMMITTED, null),
            new Row("DELTA-1 no delta before a position", OPENING, CONTIGUOUS, null),
            new Row("DELTA-1 no delta before a position", OPENING, GAP, null),
            new Row("DELTA-10 nothing to regenerate", OPENING, BELOW_SENT, null),
            new Row("DELTA-10 nothing to regenerate", OPENING, ABOVE_SENT, null),
            new Row("DELTA-10 nothing to rebootstrap", OPENING, REBOOT, null),
            new Row("SES-5 refused at Open", OPENING, CLOSE, new Closed("SHUTTING_DOWN")),

            new Row("SES-4 one Open per session", FIRST_BOOTSTRAP, RESUMED, null),
            new Row("SES-4 one Open per session", FIRST_BOOTSTRAP, BOOTSTRAP, null),
            new Row("SNAP-5 commit at S1 in one transition", FIRST_BOOTSTRAP, COMMITTED, new Streaming(new Position(W, 20))),
            new Row("SNAP-6 replay is not a stream delta", FIRST_BOOTSTRAP, CONTIGUOUS, null),
            new Row("SNAP-6 replay is not a stream delta", FIRST_BOOTSTRAP, GAP, null),
            new Row("SNAP-8 no regeneration before a commit", FIRST_BOOTSTRAP, BELOW_SENT, null),
            new Row("SNAP-8 no regeneration before a commit", FIRST_BOOTSTRAP, ABOVE_SENT, null),
            new Row("SNAP-4 a retry stays in bootstrap", FIRST_BOOTSTRAP, REBOOT, null),
            new Row("SNAP-10 close during bootstrap", FIRST_BOOTSTRAP, CLOSE, new Closed("SHUTTING_DOWN")),

            new Row("SES-4 one Open per session", REBOOTSTRAP, RESUMED, null),
            new Row("SES-4 one Open per session", REBOOTSTRAP, BOOTSTRAP, null),
            new Row("SNAP-5 a new view replaces the old at S1", REBOOTSTRAP, COMMITTED, new Streaming(new Position(W, 20))),
            new Row("SNAP-6 replay is not a stream delta", REBOOTSTRAP, CONTIGUOUS, null),
            new Row("SNAP-6 replay is not a stream delta", REBOOTSTRAP, GAP, null),
            new Row("SNAP-8 no regeneration before a commit", REBOOTSTRAP, BELOW_SENT, null),
            new Row("SNAP-8 no regeneration before a commit", REBOOTSTRAP, ABOVE_SENT, null),
            new Row("SNAP-4 a retry stays in bootstrap", REBOOTSTRAP, REBOOT, null),
            new Row("SNAP-10 close during bootstrap", REBOOTSTRAP, CLOSE, new Closed("SHUTTING_DOWN")),

            new Row("SES-4 one Open per session", STREAMING, RESUMED, null),
            new Row("SES-4 one Open per session", STREAMING, BOOTSTRAP, null),
            new Row("SNAP-5 a commit needs a bootstrap", STREAMING, COMMITTED, null),
            new Row("INV-4 a delta starts at the cursor", STREAMING, CONTIGUOUS, new Streaming(new Position(V, 15))),
            new Row("INV-4 a delta that skips coverage is a bug", STREAMING, GAP, null),
            new Row("DELTA-10 regenerate from the applied cursor", STREAMING, BELOW_SENT, new Streaming(new Position(V, 7))),
            new Row("DELTA-10 never above the cursor sent", STREAMING, ABOVE_SENT, null),
            new Row("BND-4 history gone: a new snapshot", STREAMING, REBOOT, REBOOTSTRAP),
            new Row("SES-5 closed while streaming", STREAMING, CLOSE, new Closed("SHUTTING_DOWN")),

            new Row("SES-6 a closed session never changes again", CLOSED, RESUMED, null),
            new Row("SES-6 a closed session never changes again", CLOSED, BOOTSTRAP, null),
            new Row("SES-6 a closed session never changes again", CLOSED, COMMITTED, null),
            new Row("SES-6 a closed session never changes again", CLOSED, CONTIGUOUS, null),
            new Row("SES-6 a closed session never changes again", CLOSED, GAP, null),
            new Row("SES-6 a closed session never changes again", CLOSED, BELOW_SENT, null),
            new Row("SES-6 a closed session never changes again", CLOSED, ABOVE_SENT, null),
            new Row("SES-6 a closed session never changes again", CLOSED, REBOOT, null),
            new Row("SES-6 a closed session never changes again", CLOSED, CLOSE, null));

    static Stream<Row> table() {
        return TABLE.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    @DisplayName("SES-12 SNAP-5 SNAP-8 DELTA-10 INV-4 source session edge table")
    void edge(Row row) {
        if (row.to() == null) {
            assertThatThrownBy(() -> SourceState.next(row.from(), row.event()))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("illegal edge " + row.from());
        } else {
            assertThat(SourceState.next(row.from(), row.event())).isEqualTo(row.to());
        }
    }

    @Test
    @DisplayName("the edge table lists every (state, event) pair exactly once")
    void tableIsComplete() {
        Set<List<Object>> pairs = new HashSet<>();
        for (Row r : TABLE) {
            assertThat(pairs.add(List.of(r.from(), r.event()))).as("duplicate row %s", r).isTrue();
        }
        assertThat(pairs).hasSize(STATES.size() * EVENTS.size());
    }

    @Test
    @DisplayName("DELTA-10 SNAP-8 a regeneration request: same view and a retained cursor regenerate, anything else bootstraps")
    void regenerationDecision() {
        assertThat(SourceState.onRegenerationRequest(STREAMING, new InstalledCursor(V, 7), 5)).isEqualTo(new Regenerated(7));
        assertThat(SourceState.onRegenerationRequest(STREAMING, new InstalledCursor(V, 4), 5))
                .as("cursor 4 needs sequence 5, the oldest retained").isEqualTo(new Regenerated(4));
        assertThat(SourceState.onRegenerationRequest(STREAMING, new InstalledCursor(V, 3), 5))
                .as("trimmed history").isEqualTo(new Rebootstrap());
        assertThat(SourceState.onRegenerationRequest(STREAMING, new InstalledCursor(W, 7), 0))
                .as("another view").isEqualTo(new Rebootstrap());
        assertThat(SourceState.onRegenerationRequest(STREAMING, new InstalledCursor(V, 11), 0))
                .as("above the cursor sent").isEqualTo(new Rebootstrap());
    }

    @Test
    @DisplayName("DIAG-1 the position a requester may still name survives a rebootstrap until the next commit")
    void positionAcrossRebootstrap() {
        assertThat(OPENING.position()).isEmpty();
        assertThat(STREAMING.position()).contains(V_AT_10);
        assertThat(SourceState.next(STREAMING, REBOOT).position()).contains(V_AT_10);
        assertThat(CLOSED.position()).isEmpty();
    }
}
