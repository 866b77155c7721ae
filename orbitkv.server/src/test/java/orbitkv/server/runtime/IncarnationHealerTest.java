package orbitkv.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import orbitkv.membership.MembershipEvent.FenceCause;
import orbitkv.membership.NodeId;
import orbitkv.membership.RegistrationResult;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.incarnation.HealReport;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The healer's state machine (issue 17 item 5, INV-7): which fences it heals, how attempts are paced and
 * bounded, what it reports. Attempts are scripted; the switch itself is the real-process gate's job
 * (SelfHealGateTest).
 */
@Tag("unit")
class IncarnationHealerTest {
    private static final Duration BOUND = Duration.ofSeconds(10);

    /** Scripted attempts: each call takes the next result (Unavailable when the script is empty). */
    private static final class Script {
        static final RegistrationResult SWITCH = new RegistrationResult.Unavailable("switch");
        final Deque<RegistrationResult> results = new ArrayDeque<>();
        final AtomicInteger calls = new AtomicInteger();
        IncarnationHealer healer;
        String healedAs;

        RegistrationResult next() {
            calls.incrementAndGet();
            RegistrationResult r;
            synchronized (results) {
                r = results.isEmpty() ? new RegistrationResult.Unavailable("etcd down") : results.poll();
            }
            if (r == SWITCH) {
                healer.serving(healedAs); // what the Manager's switch does on success
                return new RegistrationResult.Unavailable("(switched)");
            }
            return r;
        }
    }

    private static void await(String what, BooleanSupplier c) {
        long end = System.nanoTime() + BOUND.toNanos();
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + BOUND + ": " + what);
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    @Test
    @DisplayName("INV-7 a lease fence heals after failed attempts; history, attempts and heals are reported (bounded history)")
    void healsAfterFailures() throws Exception {
        Script s = new Script();
        s.results.add(new RegistrationResult.Unavailable("etcd at x did not answer"));
        s.results.add(new RegistrationResult.Contended(new NodeId("a"), "raced"));
        s.results.add(Script.SWITCH); // the third attempt registers
        s.healedAs = "a/2/new";
        try (IncarnationHealer h = new IncarnationHealer(new ManagerConfig.Heal(true, 1, 4, 0), s::next)) {
            s.healer = h;
            h.serving("a/1/old");
            assertThat(h.report().state()).isEqualTo("serving");
            h.fenced("a/1/old", FenceCause.LEASE_DEADLINE_PASSED);
            await("healed", () -> h.state() == IncarnationHealer.State.SERVING && h.report().heals() == 1);
            HealReport r = h.report();
            assertThat(r.attempts()).isEqualTo(3);
            assertThat(r.lastError()).isEqualTo("raced");
            assertThat(r.history()).containsExactly(new HealReport.Past("a/1/old", "LEASE_DEADLINE_PASSED"),
                    new HealReport.Past("a/2/new", null));
            for (int i = 3; i < 20; i++) {
                h.serving("a/" + i + "/x");
            }
            assertThat(h.report().history()).hasSize(HealReport.HISTORY_MAX);
        }
    }

    @Test
    @DisplayName("INV-7 issue 33: a fence for a tampered own member record heals (only a real replacement stops healing)")
    void tamperedOwnRecordHeals() throws Exception {
        Script s = new Script();
        s.results.add(Script.SWITCH);
        s.healedAs = "t/2/new";
        try (IncarnationHealer h = new IncarnationHealer(new ManagerConfig.Heal(true, 1, 4, 0), s::next)) {
            s.healer = h;
            h.serving("t/1/old");
            h.fenced("t/1/old", FenceCause.MEMBER_RECORD_TAMPERED);
            await("healed after tampering", () -> h.state() == IncarnationHealer.State.SERVING && h.report().heals() == 1);
            assertThat(h.report().history()).containsExactly(new HealReport.Past("t/1/old", "MEMBER_RECORD_TAMPERED"),
                    new HealReport.Past("t/2/new", null));
        }
    }

    @Test
    @DisplayName("INV-7 replaced by a newer incarnation, disabled, shutdown: no heal; a permanent refusal or the attempt bound stops healing")
    void whatIsNeverHealed() throws Exception {
        Script s = new Script();
        try (IncarnationHealer h = new IncarnationHealer(new ManagerConfig.Heal(true, 1, 2, 0), s::next)) {
            s.healer = h;
            h.serving("a/1/x");
            h.fenced("a/1/x", FenceCause.SHUTDOWN);
            assertThat(h.state()).isEqualTo(IncarnationHealer.State.SERVING);
            h.fenced("a/1/x", FenceCause.REPLACED_BY_NEWER_INCARNATION);
            assertThat(h.state()).isEqualTo(IncarnationHealer.State.STOPPED);
            assertThat(h.report().lastError()).contains("another process");
            assertThat(s.calls.get()).isZero();
        }
        Script off = new Script();
        try (IncarnationHealer h = new IncarnationHealer(new ManagerConfig.Heal(false, 1, 2, 0), off::next)) {
            h.serving("b/1/x");
            h.fenced("b/1/x", FenceCause.LEASE_LOST);
            assertThat(h.state()).isEqualTo(IncarnationHealer.State.STOPPED);
            assertThat(h.report().enabled()).isFalse();
        }
        Script superseded = new Script();
        superseded.results.add(new RegistrationResult.Superseded(new NodeId("c"), "c/3/other"));
        try (IncarnationHealer h = new IncarnationHealer(new ManagerConfig.Heal(true, 1, 2, 0), superseded::next)) {
            superseded.healer = h;
            h.serving("c/1/x");
            h.fenced("c/1/x", FenceCause.LEASE_LOST);
            await("stopped by a permanent refusal", () -> h.state() == IncarnationHealer.State.STOPPED);
            assertThat(h.report().lastError()).contains("c/3/other");
            assertThat(superseded.calls.get()).isEqualTo(1);
        }
        Script bounded = new Script(); // always Unavailable
        try (IncarnationHealer h = new IncarnationHealer(new ManagerConfig.Heal(true, 1, 2, 3), bounded::next)) {
            bounded.healer = h;
            h.serving("d/1/x");
            h.fenced("d/1/x", FenceCause.LEASE_DEADLINE_PASSED);
            await("stopped after 3 attempts", () -> h.state() == IncarnationHealer.State.STOPPED);
            assertThat(h.report().attempts()).isEqualTo(3);
            assertThat(bounded.calls.get()).isEqualTo(3);
        }
    }
}
