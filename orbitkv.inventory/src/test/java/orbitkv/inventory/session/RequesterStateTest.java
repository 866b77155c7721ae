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
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.session.RequesterState.Accepted;
import orbitkv.inventory.session.RequesterState.AwaitingSnapshot;
import orbitkv.inventory.session.RequesterState.BackOff;
import orbitkv.inventory.session.RequesterState.BackingOff;
import orbitkv.inventory.session.RequesterState.Begun;
import orbitkv.inventory.session.RequesterState.CommitRejected;
import orbitkv.inventory.session.RequesterState.Connect;
import orbitkv.inventory.session.RequesterState.Ended;
import orbitkv.inventory.session.RequesterState.Event;
import orbitkv.inventory.session.RequesterState.Idle;
import orbitkv.inventory.session.RequesterState.Installed;
import orbitkv.inventory.session.RequesterState.Opening;
import orbitkv.inventory.session.RequesterState.Outcome;
import orbitkv.inventory.session.RequesterState.Staging;
import orbitkv.inventory.session.RequesterState.Stop;
import orbitkv.inventory.session.RequesterState.Stopped;
import orbitkv.inventory.session.RequesterState.Streaming;
import orbitkv.inventory.wire.ErrorCause;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The requester end's state machine on its own: the edge table of {@link RequesterState#next}, every
 * (state, event) pair with its expected outcome: a move, a protocol refusal (the source's error), ignored
 * (a replaced stream's event, SES-6), or illegal (this package's error).
 */
@Tag("unit")
class RequesterStateTest {
    static final UUID S = new UUID(9, 1);
    static final UUID OLD = new UUID(9, 0);
    static final UUID NEW = new UUID(9, 2);
    static final UUID INSTALLED = new UUID(1, 1);
    static final UUID STAGED = new UUID(2, 2);
    static final UUID NEXT_VIEW = new UUID(3, 3);
    static final long T = 1_000;

    static final Idle IDLE = new Idle();
    static final BackingOff BACKING_OFF = new BackingOff();
    static final Opening OPENING_RESUME = new Opening(S, Optional.of(new InstalledCursor(INSTALLED, 40)));
    static final Opening OPENING_FRESH = new Opening(S, Optional.empty());
    static final AwaitingSnapshot AWAITING = new AwaitingSnapshot(S);
    static final Staging FIRST_STAGING = new Staging(S, STAGED, T, Optional.empty());
    static final Staging RESTAGING = new Staging(S, STAGED, T, Optional.of(INSTALLED));
    static final Streaming STREAMING = new Streaming(S, INSTALLED);
    static final Stopped STOPPED = new Stopped();

    static final Connect CONNECT = new Connect(NEW, Optional.empty());
    static final BackOff BACK_OFF = new BackOff();
    static final Accepted RESUMED = new Accepted(S, true);
    static final Accepted BOOTSTRAP = new Accepted(S, false);
    static final Begun BEGUN = new Begun(S, NEXT_VIEW, T + 5);
    static final Installed INSTALLED_STAGED = new Installed(S, STAGED);
    static final Installed INSTALLED_OTHER = new Installed(S, NEXT_VIEW);
    static final CommitRejected REJECTED = new CommitRejected(S);
    static final Ended ENDED = new Ended(S);
    static final Accepted STALE = new Accepted(OLD, false);
    static final Ended STALE_END = new Ended(OLD);
    static final Stop STOP = new Stop();

    static final List<RequesterState> STATES = List.of(IDLE, BACKING_OFF, OPENING_RESUME, OPENING_FRESH, AWAITING,
            FIRST_STAGING, RESTAGING, STREAMING, STOPPED);
    static final List<Event> EVENTS = List.of(CONNECT, BACK_OFF, RESUMED, BOOTSTRAP, BEGUN, INSTALLED_STAGED, INSTALLED_OTHER,
            REJECTED, ENDED, STALE, STALE_END, STOP);

    /** What a row expects. */
    sealed interface Expect {
        record To(RequesterState state) implements Expect {}

        record Refused(ErrorCause cause) implements Expect {}

        record Ignored() implements Expect {}

        record Illegal() implements Expect {}
    }

    static Expect to(RequesterState s) {
        return new Expect.To(s);
    }

    static final Expect ILLEGAL = new Expect.Illegal();
    static final Expect IGNORED = new Expect.Ignored();
    static final Expect MALFORMED = new Expect.Refused(ErrorCause.MALFORMED_FRAME);

    record Row(String rule, RequesterState from, Event event, Expect expect) {
        @Override
        public String toString() {
            return rule + ": " + from + " --" + event + "--> " + expect;
        }
    }

    static final List<Row> TABLE = new java.util.ArrayList<>();

    private static void row(String rule, RequesterState from, Event e, Expect expect) {
        TABLE.add(new Row(rule, from, e, expect));
    }

    static {
        for (RequesterState disconnected : List.of(IDLE, BACKING_OFF)) {
            row("SES-6 a fresh stream, a fresh session id", disconnected, CONNECT, to(new Opening(NEW, Optional.empty())));
            row("SES-5 not admitted: wait", disconnected, BACK_OFF, to(BACKING_OFF));
            for (Event e : List.of(RESUMED, BOOTSTRAP, BEGUN, INSTALLED_STAGED, INSTALLED_OTHER, REJECTED, ENDED, STALE, STALE_END)) {
                row("SES-6 no stream: a stream's event is stale", disconnected, e, IGNORED);
            }
            row("stop is terminal", disconnected, STOP, to(STOPPED));
        }
        for (Opening opening : List.of(OPENING_RESUME, OPENING_FRESH)) {
            row("SES-6 one stream at a time", opening, CONNECT, ILLEGAL);
            row("SES-6 one stream at a time", opening, BACK_OFF, ILLEGAL);
            row("SNAP-8 resume only the installed view offered", opening, RESUMED,
                    opening.resume().isPresent() ? to(new Streaming(S, INSTALLED)) : MALFORMED);
            row("SNAP-1 bootstrap mode waits for SnapshotBegin", opening, BOOTSTRAP, to(AWAITING));
            row("SES-4 the first source frame is OpenAccepted", opening, BEGUN, MALFORMED);
            row("SNAP-5 no install without staging", opening, INSTALLED_STAGED, ILLEGAL);
            row("SNAP-5 no install without staging", opening, INSTALLED_OTHER, ILLEGAL);
            row("SNAP-7 no commit without staging", opening, REJECTED, ILLEGAL);
            row("SNAP-10 an end before acceptance backs off", opening, ENDED, to(BACKING_OFF));
            row("SES-6 a replaced stream's frame", opening, STALE, IGNORED);
            row("SES-6 a replaced stream's end", opening, STALE_END, IGNORED);
            row("stop is terminal", opening, STOP, to(STOPPED));
        }
        row("SES-6 one stream at a time", AWAITING, CONNECT, ILLEGAL);
        row("SES-6 one stream at a time", AWAITING, BACK_OFF, ILLEGAL);
        row("SES-4 one OpenAccepted per stream", AWAITING, RESUMED, MALFORMED);
        row("SES-4 one OpenAccepted per stream", AWAITING, BOOTSTRAP, MALFORMED);
        row("SNAP-1 a hidden staging view", AWAITING, BEGUN, to(new Staging(S, NEXT_VIEW, T + 5, Optional.empty())));
        row("SNAP-5 no install without staging", AWAITING, INSTALLED_STAGED, ILLEGAL);
        row("SNAP-5 no install without staging", AWAITING, INSTALLED_OTHER, ILLEGAL);
        row("SNAP-7 no commit without staging", AWAITING, REJECTED, ILLEGAL);
        row("SNAP-10 disconnect", AWAITING, ENDED, to(BACKING_OFF));
        row("SES-6 a replaced stream's frame", AWAITING, STALE, IGNORED);
        row("SES-6 a replaced stream's end", AWAITING, STALE_END, IGNORED);
        row("stop is terminal", AWAITING, STOP, to(STOPPED));
        for (Staging staging : List.of(FIRST_STAGING, RESTAGING)) {
            row("SES-6 one stream at a time", staging, CONNECT, ILLEGAL);
            row("SES-6 one stream at a time", staging, BACK_OFF, ILLEGAL);
            row("SES-4 one OpenAccepted per stream", staging, RESUMED, MALFORMED);
            row("SES-4 one OpenAccepted per stream", staging, BOOTSTRAP, MALFORMED);
            row("SNAP-4 a new S0 replaces the aborted attempt", staging, BEGUN,
                    to(new Staging(S, NEXT_VIEW, T + 5, staging.installed())));
            row("SNAP-5 install the staged view at S1", staging, INSTALLED_STAGED, to(new Streaming(S, STAGED)));
            row("SNAP-5 only the staged view installs", staging, INSTALLED_OTHER, ILLEGAL);
            row("SNAP-7 a rejected commit keeps the old installed view", staging, REJECTED,
                    to(staging.installed().isPresent() ? new Streaming(S, INSTALLED) : AWAITING));
            row("SNAP-10 disconnect before commit discards staging", staging, ENDED, to(BACKING_OFF));
            row("SES-6 a replaced stream's frame", staging, STALE, IGNORED);
            row("SES-6 a replaced stream's end", staging, STALE_END, IGNORED);
            row("stop is terminal", staging, STOP, to(STOPPED));
        }
        row("SES-6 one stream at a time", STREAMING, CONNECT, ILLEGAL);
        row("SES-6 one stream at a time", STREAMING, BACK_OFF, ILLEGAL);
        row("SES-4 one OpenAccepted per stream", STREAMING, RESUMED, MALFORMED);
        row("SES-4 one OpenAccepted per stream", STREAMING, BOOTSTRAP, MALFORMED);
        row("SNAP-11 a re-bootstrap keeps the installed view until commit", STREAMING, BEGUN,
                to(new Staging(S, NEXT_VIEW, T + 5, Optional.of(INSTALLED))));
        row("SNAP-5 no install without staging", STREAMING, INSTALLED_STAGED, ILLEGAL);
        row("SNAP-5 no install without staging", STREAMING, INSTALLED_OTHER, ILLEGAL);
        row("SNAP-7 no commit without staging", STREAMING, REJECTED, ILLEGAL);
        row("SNAP-10 disconnect", STREAMING, ENDED, to(BACKING_OFF));
        row("SES-6 a replaced stream's frame", STREAMING, STALE, IGNORED);
        row("SES-6 a replaced stream's end", STREAMING, STALE_END, IGNORED);
        row("stop is terminal", STREAMING, STOP, to(STOPPED));
        for (Event e : EVENTS) {
            row("stopped is terminal: nothing moves it", STOPPED, e, IGNORED);
        }
    }

    static Stream<Row> table() {
        return TABLE.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    @DisplayName("SES-6 SNAP-1 SNAP-4 SNAP-5 SNAP-7 SNAP-8 SNAP-10 requester session edge table")
    void edge(Row row) {
        switch (row.expect()) {
            case Expect.Illegal i -> assertThatThrownBy(() -> RequesterState.next(row.from(), row.event()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("illegal edge " + row.from());
            case Expect.To t -> assertThat(RequesterState.next(row.from(), row.event())).isEqualTo(new Outcome.Moved(t.state()));
            case Expect.Ignored i -> assertThat(RequesterState.next(row.from(), row.event())).isInstanceOf(Outcome.Ignored.class);
            case Expect.Refused r -> assertThat(RequesterState.next(row.from(), row.event()))
                    .isInstanceOfSatisfying(Outcome.Refused.class, o -> assertThat(o.refusal().cause()).isEqualTo(r.cause()));
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
    @DisplayName("SNAP-6 SNAP-8 deltas go to staging while it exists, else to the installed view, else nowhere")
    void deltaTarget() {
        assertThat(OPENING_RESUME.deltaTarget()).isEmpty();
        assertThat(AWAITING.deltaTarget()).isEmpty();
        assertThat(RESTAGING.deltaTarget()).contains(STAGED);
        assertThat(STREAMING.deltaTarget()).contains(INSTALLED);
        assertThat(BACKING_OFF.deltaTarget()).isEmpty();
    }

    @Test
    @DisplayName("DIAG-1 every state reports its status")
    void status() {
        assertThat(IDLE.status()).isEqualTo(SubscriptionStatus.State.CONNECTING);
        assertThat(OPENING_FRESH.status()).isEqualTo(SubscriptionStatus.State.CONNECTING);
        assertThat(AWAITING.status()).isEqualTo(SubscriptionStatus.State.BOOTSTRAPPING);
        assertThat(RESTAGING.status()).isEqualTo(SubscriptionStatus.State.BOOTSTRAPPING);
        assertThat(STREAMING.status()).isEqualTo(SubscriptionStatus.State.STREAMING);
        assertThat(BACKING_OFF.status()).isEqualTo(SubscriptionStatus.State.BACKING_OFF);
        assertThat(STOPPED.status()).isEqualTo(SubscriptionStatus.State.CLOSED);
    }
}
