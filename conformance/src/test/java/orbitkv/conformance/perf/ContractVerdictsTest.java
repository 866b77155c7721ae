package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import orbitkv.testing.ContractVerdicts;
import orbitkv.testing.ContractVerdicts.Verdict;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The smoke of the enforced contracts (issue 37 item 1, PERF-6) in the default run: the one verdict class judged on
 * injected figures. A FAIL fails, a collection failure (no finite figure, too few samples, no verdict at all) fails,
 * a pass passes; the verdict file and the one table of {@code scripts/bench qualify} keep their format and exit codes;
 * and every harness judges through {@link ContractVerdicts}, never with its own comparison.
 */
@Tag("unit")
class ContractVerdictsTest {
    private final List<String> printed = new ArrayList<>();

    private ContractVerdicts verdicts() {
        return new ContractVerdicts("TestHarness", printed::add);
    }

    @Test
    void passingFiguresPass() {
        ContractVerdicts v = verdicts();
        v.atLeast("P1 p99 ratio", 12, 12.0, "×", "10.1..13.0");
        v.atMost("one 64 KiB block p50", 1.0, 0.95, " ms", "");
        v.withinPercent("P2 rx B/s", 5, -4.9, "");
        v.collected("visibility samples", 1000, 1000, "samples");
        v.enforce();
        assertThat(v.passed()).isTrue();
        assertThat(printed.getFirst()).isEqualTo("PASS              P1 p99 ratio: 12× (threshold ≥ 12×; spread 10.1..13.0)");
        assertThat(printed.getLast()).isEqualTo("TestHarness: 4 of 4 contract cells PASS");
    }

    @Test
    void aFailFails() {
        ContractVerdicts v = verdicts();
        v.atLeast("P1 p99 ratio", 12, 11.999, "×", "");
        v.atMost("one 64 KiB block p50", 1.0, 1.001, " ms", "");
        v.withinPercent("P2 rx B/s", 5, 5.1, "");
        v.check("P2 all four", "each within ±5 %", "+0.1, +6.0, 0, 0", "", false);
        assertThat(v.cells()).extracting(ContractVerdicts.Cell::verdict).containsOnly(Verdict.FAIL);
        assertThatThrownBy(v::enforce).isInstanceOf(AssertionError.class)
                .hasMessageContaining("4 contract cell(s) did not pass").hasMessageContaining("FAIL              P1 p99 ratio: 11.999×");
    }

    @Test
    void aCollectionFailureFails() {
        ContractVerdicts nan = verdicts();
        assertThat(nan.atLeast("ratio", 0.8, Double.NaN, "", "").verdict()).isEqualTo(Verdict.COLLECTION_FAILED);
        assertThat(nan.atMost("p50", 1, Double.POSITIVE_INFINITY, " ms", "").verdict()).isEqualTo(Verdict.COLLECTION_FAILED);
        assertThatThrownBy(nan::enforce).isInstanceOf(AssertionError.class).hasMessageContaining("COLLECTION FAILED");

        ContractVerdicts few = verdicts();
        assertThat(few.collected("samples", 999, 1000, "samples").verdict()).isEqualTo(Verdict.COLLECTION_FAILED);
        assertThatThrownBy(few::enforce).isInstanceOf(AssertionError.class).hasMessageContaining("too few samples");

        ContractVerdicts invalid = verdicts();
        invalid.atLeast("fine", 1, 2, "", "");
        invalid.collectionFailed("isolation DRAM save", "≤ 1.05", "3 of 4 runs invalid (gap 534 ms)");
        assertThat(invalid.passed()).isFalse();
        assertThatThrownBy(invalid::enforce).isInstanceOf(AssertionError.class).hasMessageContaining("gap 534 ms");

        ContractVerdicts none = verdicts();
        assertThat(none.passed()).isFalse();
        assertThatThrownBy(none::enforce).isInstanceOf(AssertionError.class).hasMessageContaining("the run produced no verdict");
    }

    @Test
    void theVerdictFileRendersAsOneTableWithItsExitCode(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("verdicts.tsv");
        ContractVerdicts a = verdicts();
        a.atLeast("read ratio 1 MiB", 0.8, 0.91, "", "0.85..0.97");
        ContractVerdicts.append(file, a.cells());
        assertThat(render(file, "load 0.42 at start")).startsWith("0\n").contains(
                "| TestHarness | read ratio 1 MiB | ≥ 0.8 | 0.91 | 0.85..0.97 | **PASS** | - |",
                "conditions: load 0.42 at start", "qualify: 1 of 1 contract cells PASS\n");

        ContractVerdicts b = new ContractVerdicts("Other", printed::add);
        b.collectionFailed("bootstrap run 2", "≥ 55 %", "mvn exited 1 before any verdict");
        ContractVerdicts.append(file, b.cells());
        assertThat(ContractVerdicts.read(file)).hasSize(2);
        assertThat(render(file)).startsWith("1\n").contains("**COLLECTION FAILED** | mvn exited 1 before any verdict |",
                "qualify: 1 of 2 contract cells PASS -> FAIL");

        assertThat(render(dir.resolve("missing.tsv"))).startsWith("1\n").contains("(no cell: COLLECTION FAILED)");
        Files.writeString(dir.resolve("bad.tsv"), "only\tthree\tfields\n");
        assertThat(render(dir.resolve("bad.tsv"))).startsWith("2\n");
        assertThatThrownBy(() -> verdicts().check("tab\there", "t", "f", "", true)).isInstanceOf(IllegalArgumentException.class);
    }

    private static String render(Path file, String... conditions) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        String[] args = Stream.concat(Stream.of(file.toString()), Stream.of(conditions)).toArray(String[]::new);
        int code = ContractVerdicts.render(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return code + "\n" + bytes.toString(StandardCharsets.UTF_8);
    }

    /** Every performance harness judges through the one class: no harness keeps its own PASS/FAIL comparison. */
    @Test
    void everyHarnessJudgesThroughTheOneClass() throws IOException {
        Path root = Path.of(System.getProperty("user.dir")).getParent();
        String perf = "conformance/src/jmh/java/orbitkv/conformance/perf/";
        String transfer = "orbitkv.transfer/src/jmh/java/orbitkv/transfer/";
        List<String> judging = List.of(perf + "EtcdLoadHarness.java", perf + "VisibilityBench.java", perf + "IsolationHarness.java",
                perf + "RestoreHarness.java", perf + "RouteAblationBench.java", perf + "ScalingBench.java",
                "conformance/src/jmh/java/orbitkv/conformance/session/SessionBenchHarness.java", transfer + "ReadRatioHarness.java",
                transfer + "DataChannelTlsHarness.java", "orbitkv.index/src/jmh/java/orbitkv/index/view/RowFootprintHarness.java",
                "conformance/src/test/java/orbitkv/conformance/manager/AttackHarness.java");
        for (String h : judging) {
            assertThat(Files.readString(root.resolve(h))).as(h + " judges through ContractVerdicts").contains("ContractVerdicts");
        }
        List<Path> sources;
        try (Stream<Path> files = Stream.of(perf, transfer, "conformance/src/jmh/java/orbitkv/conformance/session/").map(root::resolve)
                .flatMap(ContractVerdictsTest::list)) {
            sources = files.filter(p -> p.toString().endsWith("Harness.java") || p.toString().endsWith("Bench.java")).toList();
        }
        assertThat(sources).hasSizeGreaterThan(judging.size());
        for (Path p : sources) {
            assertThat(Files.readString(p)).as(p + " keeps no comparison of its own").doesNotContain("? \"PASS\" : \"FAIL\"");
        }
    }

    private static Stream<Path> list(Path dir) {
        try {
            return Files.list(dir);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
