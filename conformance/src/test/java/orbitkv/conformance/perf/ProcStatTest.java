package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ProcStatTest {
    @Test
    @DisplayName("DIAG-3 PERF-3 thread deltas: surviving threads give differences, new threads their whole counts, exited threads are counted, never zeroed")
    void deltas() {
        Map<Integer, ProcStat.ThreadSample> before = Map.of(
                1, new ProcStat.ThreadSample(1, "main", 100, 10, 5, 1, 1_000, 50, 7),
                2, new ProcStat.ThreadSample(2, "grpc-worker-1", 10, 0, 3, 0, 200, 10, 2),
                3, new ProcStat.ThreadSample(3, "gone-7", 40, 0, 1, 0, 10, 1, 1));
        Map<Integer, ProcStat.ThreadSample> after = Map.of(
                1, new ProcStat.ThreadSample(1, "main", 130, 12, 9, 2, 1_500, 80, 10),
                2, new ProcStat.ThreadSample(2, "grpc-worker-1", 15, 1, 4, 1, 260, 20, 3),
                4, new ProcStat.ThreadSample(4, "grpc-worker-2", 6, 0, 2, 0, 90, 5, 1));
        ProcStat.ThreadDeltas d = ProcStat.delta(before, after);
        assertThat(d.surviving()).isEqualTo(2);
        assertThat(d.started()).isEqualTo(1);
        assertThat(d.exited()).isEqualTo(1);
        assertThat(d.schedstat()).isTrue();
        assertThat(d.groups()).containsOnlyKeys("main", "grpc-worker");
        assertThat(d.groups().get("main")).isEqualTo(new ProcStat.Group(1, 32, 4, 1, 500, 30, 3));
        assertThat(d.groups().get("grpc-worker")).isEqualTo(new ProcStat.Group(2, 6 + 6, 1 + 2, 1, 60 + 90, 10 + 5, 1 + 1));
        assertThat(d.total().cpuTicks()).isEqualTo(44);
    }

    @Test
    @DisplayName("DIAG-3 this JVM's /proc figures are readable: CPU, RSS and its peak, threads")
    void self() {
        ProcStat.ProcessSample p = ProcStat.process(ProcessHandle.current().pid());
        assertThat(p.rssBytes()).isPositive();
        assertThat(p.rssPeakBytes()).isGreaterThanOrEqualTo(p.rssBytes());
        assertThat(p.threads()).isPositive();
        assertThat(ProcStat.threads(ProcessHandle.current().pid())).isNotEmpty();
        assertThat(ProcStat.groupName("grpc-default-worker-ELG-3-1")).isEqualTo("grpc-default-worker-ELG");
    }
}
