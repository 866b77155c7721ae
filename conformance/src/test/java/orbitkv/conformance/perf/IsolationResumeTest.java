package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.perf.IsolationHarness.Arm;
import orbitkv.conformance.perf.IsolationHarness.Medium;
import orbitkv.conformance.perf.IsolationHarness.Op;
import orbitkv.conformance.perf.IsolationHarness.Round;
import orbitkv.conformance.perf.IsolationHarness.RunResult;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The isolation matrix's resume directory (issue 37 item 4) without processes: a kept pair reads back with the
 * rounds (all four operations, or an operation off), validity and identity the verdict needs; a directory of another
 * settings' fingerprint, and a pair with a collection failure, are refused by name; a half-written pair never loads.
 */
@Tag("unit")
class IsolationResumeTest {
    static final long MS = 1_000_000L;
    static final String FINGERPRINT = "media=DRAM pairs=2 test";

    @TempDir
    Path dir;

    /** Rounds with every operation timed ({@code peer}) or the peer restore off. */
    static List<Round> rounds(boolean peer, long offset) {
        List<Round> out = new ArrayList<>();
        for (int k = 0; k < 5; k++) {
            long t = offset + k * 150 * MS;
            long[] s = {t + MS, t + 3 * MS, t + 5 * MS, peer ? t + 20 * MS : 0};
            long[] e = {t + 2 * MS + k, t + 4 * MS + k, t + 7 * MS + k, peer ? t + 24 * MS + k : 0};
            out.add(new Round(k, k < 2, t, s, e, 0, peer ? 4 : 0));
        }
        return out;
    }

    static RunResult run(Arm arm, int order, List<Round> rounds, long endNs) {
        // the idle rule with no poll: valid iff the measured interval is within the 100 ms polling-gap bound
        IsolationRules.Validity v = IsolationRules.idle(List.of(), List.of(), 0, endNs, 1_000 * MS);
        return new RunResult(Medium.DRAM, 0, arm, order, rounds, v, null, Map.of(), 0, 0, 0, new long[Op.values().length], 0, null, null);
    }

    @Test
    @DisplayName("PERF-3 a kept pair loads back with its rounds (peer restore included), order, arms, validity and recorded time")
    void roundTrip() throws Exception {
        RunResult idle = run(Arm.IDLE, 0, rounds(true, 1_000 * MS), 50 * MS);
        RunResult twin = run(Arm.IDLE_TWIN, 1, rounds(true, 9_000 * MS), 200 * MS);
        assertThat(idle.valid()).isTrue();
        assertThat(twin.valid()).as("a 200 ms polling gap").isFalse();
        IsolationResume store = IsolationResume.open(dir, FINGERPRINT);
        assertThat(store.load(Medium.DRAM, 0)).isNull();
        store.store(new RunResult[] {idle, twin});
        assertThat(dir.resolve("DRAM-pair1").resolve(IsolationResume.PAIR)).isNotEmptyFile();
        assertThat(Files.readAllLines(dir.resolve("DRAM-pair1/DRAM-pair1-idle2/rounds.csv")).getFirst()).contains("peer_restore_start_ns");

        IsolationResume.Loaded loaded = IsolationResume.open(dir, FINGERPRINT).load(Medium.DRAM, 0);
        assertThat(loaded.recorded()).isNotBlank();
        for (int i = 0; i < 2; i++) {
            RunResult want = i == 0 ? idle : twin;
            RunResult got = loaded.pair()[i];
            assertThat(got.loaded()).isTrue();
            assertThat(got.label()).isEqualTo(want.label());
            assertThat(List.of(got.medium(), got.pair(), got.arm(), got.order())).isEqualTo(List.of(want.medium(), want.pair(), want.arm(), want.order()));
            assertThat(got.valid()).isEqualTo(want.valid());
            assertThat(got.validitySummary()).isEqualTo(want.validity().summary());
            assertThat(got.rounds()).hasSameSizeAs(want.rounds());
            for (Op op : Op.values()) {
                assertThat(got.measured(op)).as(op + " latencies").containsExactly(want.measured(op));
            }
            assertThat(got.rounds()).extracting(Round::peerServed).containsOnly(4);
            assertThat(got.rounds().stream().filter(Round::warmup)).hasSize(2);
            assertThat(got.rounds().getLast().measures(Op.PEER_RESTORE)).isTrue();
        }
    }

    @Test
    @DisplayName("PERF-3 an operation a run does not time stays off through the rounds file")
    void operationOff() {
        List<Round> back = IsolationResume.parseRounds(IsolationResume.csv(rounds(false, 5 * MS)));
        assertThat(back).allSatisfy(r -> {
            assertThat(r.measures(Op.PEER_RESTORE)).isFalse();
            assertThat(r.measures(Op.RESTORE)).isTrue();
        });
        assertThatThrownBy(() -> IsolationResume.parseRounds(List.of("round,phase,start_ns,save_start_ns"))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("rounds file header");
    }

    @Test
    @DisplayName("PERF-3 a resume directory of another fingerprint is refused naming both; a failed pair is not kept; a half-written one never loads")
    void refusals() throws Exception {
        IsolationResume store = IsolationResume.open(dir, FINGERPRINT);
        store.store(new RunResult[] {run(Arm.IDLE, 0, rounds(true, 0), 50 * MS), run(Arm.PRESSURE, 1, rounds(true, 0), 50 * MS)});
        assertThatThrownBy(() -> IsolationResume.open(dir, "media=DRAM pairs=3 test")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("[" + FINGERPRINT + "]").hasMessageContaining("[media=DRAM pairs=3 test]");

        Files.delete(dir.resolve(IsolationResume.MATRIX)); // the pair's own fingerprint is checked too
        assertThatThrownBy(() -> IsolationResume.open(dir, "other")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("DRAM-pair1").hasMessageContaining("[" + FINGERPRINT + "]").hasMessageContaining("[other]");

        RunResult failed = RunResult.failed(Medium.DRAM, 1, Arm.PRESSURE, 3, "IllegalStateException: a bound");
        assertThatThrownBy(() -> store.store(new RunResult[] {run(Arm.IDLE, 2, rounds(true, 0), 50 * MS), failed}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("collection failure");

        Files.createDirectories(dir.resolve("DRAM-pair2.partial-x").resolve("DRAM-pair2-idle"));
        assertThat(IsolationResume.open(dir, FINGERPRINT).load(Medium.DRAM, 1)).as("a half-written pair").isNull();
        assertThat(IsolationResume.open(dir, FINGERPRINT).recordedPairs()).containsExactly("DRAM-pair1");
    }
}
