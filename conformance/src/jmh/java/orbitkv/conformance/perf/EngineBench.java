package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.docs.MarkdownTable;
import orbitkv.testing.Await;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.membership.MembershipAdmin;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 35 item 8, never in the default run: {@code scripts/bench engine} (profile {@code perf-engine}). Starts two
 * distributed Managers of one cluster with the runtime image's JVM settings and the 8B-class model config
 * ({@code docs/configs/8b-class-tp1-bf16.json}, DRAM from {@code -Dbench.engine.dram}, default 2GiB), then runs the
 * Python client's engine benchmark ({@code /usr/bin/python3 -m bench --case engine --case backends} in
 * {@code clients/python}: the client, then the LMCache and SGLang backends over it, issue 36 item 6) against
 * them: local reads from the first, peer reads (TCP, shared memory) through the second, the raw loopback arm in the
 * same run. The benchmark writes its JSON and SVG under this run's directory and the SVG to {@code -Dbench.docsPlots}.
 * A failed binding goal (or one without a figure) fails this test, like every harness (issue 37 item 1); with
 * {@code -Dbench.engine.strict=false} only a collection failure (a wrong byte, a refused call, a read not served by the
 * named route) does. {@code -Dbench.engine.smoke=true}: tiny sizes. With {@code -Dbench.verdicts=FILE} the binding
 * goals are appended to FILE ({@code scripts/bench qualify}'s table).
 */
@Tag("qualification")
@Timeout(value = 2, unit = TimeUnit.HOURS)
class EngineBench {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    void engine() throws Exception {
        BenchRun run = BenchRun.create("engine");
        Path root = MarkdownTable.root();
        Path work = Files.createTempDirectory(Path.of("/dev/shm"), "orbitkv-engine-");
        String cluster = "engine-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        List<ManagerProcess> managers = new ArrayList<>();
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        try {
            for (String node : List.of("holder", "peer")) {
                List<String> args = ManagerProcess.distributedArgs(cluster, node, ETCD.endpoints().toString(),
                        Files.createDirectories(work.resolve(node).resolve("dram")),
                        "--config", root.resolve("docs/configs/8b-class-tp1-bf16.json").toString(),
                        "--dram", System.getProperty("bench.engine.dram", "2GiB"), "--log-level", "WARN");
                args.addAll(ManagerProcess.LOAD_TOLERANT_LEASE);
                managers.add(ManagerProcess.launchAsImage(node, run.dir().resolve("logs"), args));
            }
            managers.forEach(ManagerProcess::awaitReady);
            for (ManagerProcess m : managers) {
                Await.until(m + " admits two members", Duration.ofSeconds(60),
                        () -> new ManagerApi(m.httpBase()).status().at("/membership/members").asInt() == 2);
            }
            assertThat(runPython(root, run, managers)).as("python3 -m bench's exit code (output above)").isZero();
        } finally {
            managers.forEach(ManagerProcess::close);
            ManagerProcess.deleteTree(work);
        }
    }

    private static int runPython(Path root, BenchRun run, List<ManagerProcess> managers) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/python3", "-m", "bench", "--case", "engine", "--case", "backends", "--urls",
                managers.get(0).httpBase() + "," + managers.get(1).httpBase(), "--run-id", run.id(),
                "--out", run.dir().toString()));
        String plots = System.getProperty("bench.docsPlots");
        if (plots != null) {
            cmd.addAll(List.of("--plot-dir", plots));
        }
        if (!"false".equals(System.getProperty("bench.engine.strict"))) {
            cmd.add("--strict");
        }
        String verdicts = System.getProperty(orbitkv.testing.ContractVerdicts.FILE_PROPERTY);
        if (verdicts != null && !verdicts.isBlank()) {
            cmd.addAll(List.of("--verdicts", verdicts));
        }
        if (Boolean.getBoolean("bench.engine.smoke")) {
            cmd.add("--smoke");
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.resolve("clients/python").toFile()).redirectErrorStream(true);
        pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
        Process p = pb.start();
        // every line through the run's report (stdout and report.txt): an inherited stream would bypass surefire
        Thread pump = Thread.ofPlatform().daemon(true).name("bench-engine-output").start(() -> {
            try (java.io.BufferedReader r = p.inputReader()) {
                r.lines().forEach(run::report);
            } catch (java.io.IOException e) {
                run.report("(python output ended: " + e + ")");
            }
        });
        if (!p.waitFor(100, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("python3 -m bench did not end within 100 minutes");
        }
        pump.join(10_000);
        return p.exitValue();
    }
}
