package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.docs.MarkdownTable;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Python client {@code orbitkv-client} (issue 35 items 6 and 7) against real Manager processes: this gate starts
 * two distributed Managers in one etcd cluster (the peer restore rows), hands their URLs and the Manager command line
 * to the client's pytest suite ({@code clients/python/tests}, which starts its own standalone Managers for round
 * trips, refusals, token, kill and SIGTERM rows), runs it with {@code /usr/bin/python3 -m pytest} (pytest and numpy
 * from Debian: scripts/lib/python-client.sh installs them), prints pytest's closing line, and fails on any failure,
 * error or skipped test: a skip here is a broken setup, never a pass.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class PythonClientGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    static final String PYTHON = "/usr/bin/python3";
    private static final Duration BOUND = Duration.ofSeconds(45);
    /** pytest's closing line, e.g. {@code ==== 93 passed in 61.02s (0:01:01) ====} or {@code 93 passed in 61.02s}. */
    private static final Pattern CLOSING = Pattern.compile("^=*\\s*(\\d+ passed.*| ?\\d+ failed.*|.*error.*|no tests ran.*) in [0-9.]+s.*$");

    private final String cluster = "pyclient-" + UUID.randomUUID().toString().substring(0, 8);
    private Path work;
    private final List<ManagerProcess> managers = new ArrayList<>();

    @BeforeAll
    void startCluster() throws Exception {
        work = Files.createTempDirectory("orbitkv-python-client-");
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        for (String node : List.of("p1", "p2")) {
            List<String> args = ManagerProcess.distributedArgs(cluster, node, ETCD.endpoints().toString(),
                    Files.createDirectories(work.resolve(node).resolve("dram")), "--dram", "256MiB",
                    "--block-bytes-max", "32MiB", "--shutdown-drain-ms", "2000");
            args.addAll(ManagerProcess.LOAD_TOLERANT_LEASE);
            managers.add(ManagerProcess.launch(node, work.resolve("logs"), args));
        }
        managers.forEach(ManagerProcess::awaitReady);
        for (ManagerProcess m : managers) {
            Await.until(m + " admits two members", BOUND,
                    () -> new ManagerApi(m.httpBase()).status().at("/membership/members").asInt() == 2);
        }
    }

    @AfterAll
    void stopAll() throws IOException {
        managers.forEach(ManagerProcess::close);
        ManagerProcess.deleteTree(work);
    }

    @Test
    @DisplayName("G1 G2 G5 G6 G9 G13 the Python client's pytest suite passes against real Managers with no test skipped")
    void pythonClientSuite() throws Exception {
        Path root = MarkdownTable.root();
        Path out = work.resolve("pytest.out");
        ProcessBuilder pb = new ProcessBuilder(PYTHON, "-m", "pytest", "clients/python/tests", "-q", "-rfEs",
                "-p", "no:cacheprovider", "--basetemp", work.resolve("pytest-tmp").toString())
                .directory(root.toFile()).redirectErrorStream(true).redirectOutput(out.toFile());
        Map<String, String> env = pb.environment();
        env.put("ORBITKV_MANAGER_CMD", new ObjectMapper().writeValueAsString(ManagerProcess.launchCommand()));
        env.put("ORBITKV_PEER_URLS", managers.get(0).httpBase() + "," + managers.get(1).httpBase());
        env.put("ORBITKV_TEST_WORK", Files.createDirectories(work.resolve("python")).toString());
        env.put("PYTHONDONTWRITEBYTECODE", "1");
        Process p = pb.start();
        boolean ended = p.waitFor(360, TimeUnit.SECONDS);
        if (!ended) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String text = Files.readString(out, StandardCharsets.UTF_8);
        String closing = text.lines().filter(l -> CLOSING.matcher(l.strip()).matches()).reduce((a, b) -> b).orElse("(no closing line)");
        System.out.println("pytest clients/python/tests: " + closing.strip());
        // the figures the suite measured (connection refusal times, tracemalloc peak, cut and shutdown outcomes)
        Path figures = work.resolve("python").resolve("figures.txt");
        if (Files.exists(figures)) {
            Files.readAllLines(figures).forEach(System.out::println);
        }
        assertThat(ended).as("pytest ended within 360 s; output:\n%s", tail(text)).isTrue();
        assertThat(p.exitValue()).as("pytest's exit code; output:\n%s", tail(text)).isZero();
        Matcher passed = Pattern.compile("(\\d+) passed").matcher(closing);
        assertThat(passed.find()).as("a closing line with a pass count: %s", closing).isTrue();
        assertThat(Integer.parseInt(passed.group(1))).isGreaterThan(50);
        assertThat(closing).as("no test may be skipped, xfailed, deselected or in error")
                .doesNotContain("skipped", "xfail", "xpass", "deselected", "error", "failed");
    }

    private static String tail(String s) {
        return s.length() > 12_000 ? s.substring(s.length() - 12_000) : s;
    }
}
