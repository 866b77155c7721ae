package orbitkv.conformance.kit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import orbitkv.conformance.peer.AdversarialRequester;
import orbitkv.conformance.peer.AdversarialSource;
import orbitkv.conformance.peer.WireFrames;
import orbitkv.inventory.wire.Liveness;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bounded time (issue 26): a row against a target that keeps its session alive with liveness but never sends
 * the required refusal FAILS within its deadline, with what it saw. The target is a fake: the adversarial
 * source on loopback answers the kit's session with a liveness frame every 20 ms, forever.
 */
@Tag("unit")
@Timeout(60)
class KitDeadlineTest {
    static final Duration ROW_BUDGET = Duration.ofMillis(1_500);
    /** The per-wait bound: shorter than the row, longer than the gap between liveness frames. */
    static final Duration WAIT = Duration.ofMillis(500);
    /** Slack for thread scheduling on a loaded 2-core host, on top of the row's budget. */
    static final Duration SLACK = Duration.ofSeconds(3);

    private AdversarialSource target;
    private AdversarialRequester kit;
    private final AtomicBoolean stop = new AtomicBoolean();
    private Thread livenessPump;

    @BeforeEach
    void livenessForeverTarget() throws Exception {
        target = AdversarialSource.start();
        kit = AdversarialRequester.connect(target.endpoint());
        livenessPump = Thread.ofVirtual().name("fake-target-liveness").start(() -> {
            try {
                AdversarialSource.ScriptedSession s = target.nextSession(Duration.ofSeconds(10));
                if (s == null) {
                    return;
                }
                RequesterFrame open = s.nextFrame(Duration.ofSeconds(10));
                long n = 1;
                while (!stop.get()) {
                    s.send(SourceFrame.newBuilder().setSessionId(open.getSessionId()).setFrameNumber(n++)
                            .setLiveness(Liveness.newBuilder().setSourceHead(10)).build());
                    Thread.sleep(20); // the fake target's liveness cadence, not a synchronisation
                }
            } catch (InterruptedException | RuntimeException | AssertionError e) {
                // the kit closed the stream, or the test ended
            }
        });
    }

    @AfterEach
    void close() throws Exception {
        stop.set(true);
        livenessPump.interrupt();
        livenessPump.join(Duration.ofSeconds(5));
        kit.close();
        target.close();
    }

    private AdversarialRequester.Session openSession() {
        AdversarialRequester.Session s = kit.open();
        UUID sid = UUID.randomUUID();
        s.send(RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(sid)).setAck(
                orbitkv.inventory.wire.Ack.newBuilder().setConsumedThroughFrame(1)).build());
        return s;
    }

    static ScenarioRow row(String id) {
        return ScenarioRow.load().stream().filter(r -> r.id().equals(id)).findFirst().orElseThrow();
    }

    @Test
    @DisplayName("SES-4 a source row whose target sends liveness forever and never refuses FAILS within --row-deadline-ms, naming what it saw")
    void livenessForeverFailsWithinDeadline() throws Exception {
        AdversarialRequester.Session s = openSession();
        long t0 = System.nanoTime();
        Verdict v = RowRunner.run(row("source/first_frame_not_open"), ROW_BUDGET,
                (deadline, seen) -> SourceScenarios.awaitError(s, deadline, WAIT, seen), () -> s.complete());
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(v).isInstanceOf(Verdict.Failed.class);
        assertThat(v.detail()).contains("row deadline of 1500 ms", "LIVENESS x");
        assertThat(took).isGreaterThanOrEqualTo(ROW_BUDGET).isLessThan(ROW_BUDGET.plus(SLACK));
    }

    @Test
    @DisplayName("a row body that ignores its deadline (waits as long as frames arrive) is stopped by the RowRunner at the deadline and FAILS")
    void runnerStopsABodyThatNeverEnds() throws Exception {
        AdversarialRequester.Session s = openSession();
        long t0 = System.nanoTime();
        Verdict v = RowRunner.run(row("source/first_frame_not_open"), ROW_BUDGET, (deadline, seen) -> {
            while (true) { // the old awaitError: keeps waiting as long as anything arrives
                var r = s.next(WAIT);
                if (r != null) {
                    seen.saw("FRAME", String.valueOf(r).lines().findFirst().orElse(""));
                }
            }
        }, () -> { });
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(v).isInstanceOf(Verdict.Failed.class);
        assertThat(v.detail()).contains("row deadline of 1500 ms", "the row was stopped", "FRAME x");
        assertThat(took).isLessThan(ROW_BUDGET.plus(SLACK));
    }

    @Test
    @DisplayName("SES-14 DELTA-12 policy rows: the expected choice is POLICY-PASS, another permitted choice POLICY-DIFFERS; a normative check, a broken preamble or a deadline FAILS")
    void policyRowVerdicts() throws Exception {
        ScenarioRow staged = row("requester/staged_page_credit");
        assertThat(staged.permission()).hasValueSatisfying(p -> assertThat(p).contains("SES-14", "may return its credit"));
        assertThat(RowRunner.verdict(staged, "ack")).isInstanceOf(Verdict.PolicyPass.class);
        assertThat(RowRunner.verdict(staged, "nothing within 5000 ms")).isInstanceOf(Verdict.PolicyDiffers.class);
        assertThat(RowRunner.run(staged, Duration.ofSeconds(5), (d, seen) -> {
            throw new AssertionError("the target never installed view V"); // a broken preamble is no permitted choice
        }, () -> { })).isInstanceOf(Verdict.Failed.class);
        assertThat(RowRunner.run(staged, Duration.ofSeconds(5), (d, seen) -> {
            throw new NormativeFailure("SES-14: the ACK of a staged page keeps the installed watermark 3, got 4");
        }, () -> { })).isInstanceOf(Verdict.Failed.class);
        assertThat(RowRunner.run(row("requester/idle_ack_silence"), Duration.ofMillis(200), (d, seen) -> {
            new java.util.concurrent.CountDownLatch(1).await(); // a body that outlives its deadline (until interrupted)
            return "silent";
        }, () -> { })).isInstanceOf(Verdict.Failed.class);
        ScenarioRow normative = row("source/wrong_protocol");
        assertThat(normative.permission()).isEqualTo(Optional.empty());
        assertThat(RowRunner.verdict(normative, "error:PROTOCOL_MISMATCH")).isInstanceOf(Verdict.Passed.class);
        assertThat(RowRunner.verdict(normative, "error:CLUSTER_MISMATCH")).isInstanceOf(Verdict.Failed.class);
        assertThatThrownBy(() -> new RowDeadline(0, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("positive");
    }
}
