package orbitkv.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code orbitkv admin} end to end through picocli. The option tests need no etcd; the round trip runs
 * against one real etcd process (the server module cannot use the conformance fixture, which depends on
 * it, so it starts /usr/bin/etcd itself and fails, never skips, when it is missing).
 */
@Tag("gate")
class AdminCommandTest {
    static Process etcd;
    static String url;
    static Path dataDir;

    record Run(int exit, String out, String err) {}

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        var cl = OrbitKvCommand.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @BeforeAll
    static void startEtcd() throws Exception {
        Path binary = Path.of("/usr/bin/etcd");
        assertThat(Files.isExecutable(binary)).as("etcd binary (Debian package etcd-server) at " + binary).isTrue();
        int[] ports = new int[2];
        List<ServerSocket> held = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            held.add(s);
            ports[i] = s.getLocalPort();
        }
        for (ServerSocket s : held) {
            s.close();
        }
        dataDir = Files.createTempDirectory("orbitkv-cli-etcd-");
        url = "http://127.0.0.1:" + ports[0];
        etcd = new ProcessBuilder(binary.toString(), "--data-dir", dataDir.resolve("d").toString(),
                "--listen-client-urls", url, "--advertise-client-urls", url,
                "--listen-peer-urls", "http://127.0.0.1:" + ports[1],
                "--initial-advertise-peer-urls", "http://127.0.0.1:" + ports[1],
                "--initial-cluster", "default=http://127.0.0.1:" + ports[1])
                .redirectErrorStream(true).redirectOutput(dataDir.resolve("etcd.log").toFile()).start();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!health().contains("\"health\":\"true\"")) {
            assertThat(etcd.isAlive()).as("etcd running").isTrue();
            assertThat(System.nanoTime() - end).as("etcd healthy within 30 s").isNegative();
            LockSupport.parkNanos(20_000_000L); // polling a condition with a bound
        }
    }

    @AfterAll
    static void stopEtcd() throws Exception {
        if (etcd != null) {
            etcd.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (dataDir != null) {
            try (var walk = Files.walk(dataDir)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static String health() {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(url + "/health").toURL().openConnection();
            c.setConnectTimeout(500);
            c.setReadTimeout(1000);
            try (InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return "";
        }
    }

    private static void etcdctl(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/etcdctl", "--endpoints=" + url));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0).as("etcdctl %s: %s", cmd, out).isTrue();
    }

    @Test
    @DisplayName("BND-6 bad option values are refused with exit 2 and a message naming the option")
    void badValues() {
        Run cluster = run("admin", "format", "--cluster", "a/b", "--etcd", "http://127.0.0.1:1");
        assertThat(cluster.exit()).isEqualTo(2);
        assertThat(cluster.err()).contains("--cluster").contains("[A-Za-z0-9._-]");
        Run etcdUrl = run("admin", "show", "--cluster", "c", "--etcd", "127.0.0.1:2379");
        assertThat(etcdUrl.exit()).isEqualTo(2);
        assertThat(etcdUrl.err()).contains("--etcd").contains("http://host:port");
        Run duration = run("admin", "prune-epochs", "--cluster", "c", "--etcd", "http://127.0.0.1:1", "--inactive-for", "-5d");
        assertThat(duration.exit()).isEqualTo(2);
        assertThat(duration.err()).contains("--inactive-for");
        Run timeout = run("admin", "show", "--cluster", "c", "--etcd", "http://127.0.0.1:1", "--etcd-timeout-ms", "0");
        assertThat(timeout.exit()).isEqualTo(2);
        assertThat(timeout.err()).contains("--etcd-timeout-ms");
        Run missing = run("admin", "cutover", "--cluster", "c", "--etcd", "http://127.0.0.1:1");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("--backup");
        assertThat(run("admin").exit()).isEqualTo(2);
    }

    @Test
    @DisplayName("MEM-1 MEM-3 admin format/show/backup/cutover/rollback through the CLI on real etcd")
    void roundTrip(@TempDir Path dir) throws Exception {
        Run format = run("admin", "format", "--cluster", "fresh", "--etcd", url);
        assertThat(format.exit()).as(format.err()).isEqualTo(0);
        assertThat(format.out()).startsWith("formatted /orbitkv/v2/fresh/format cluster=fresh cluster_uuid=");
        Run again = run("admin", "format", "--cluster", "fresh", "--etcd", url);
        assertThat(again.exit()).isEqualTo(AdminCommand.REFUSED);
        assertThat(again.err()).startsWith("refused ALREADY_FORMATTED:");

        String p = "/orbitkv/v2/legacy/";
        etcdctl("put", p + "format", "--", "protocol = orbitkv/etcd-block-publisher/v3\ncluster_uuid = 6f1c1c44-0000-4000-8000-00000000abcd\n");
        etcdctl("put", p + "epochs/n1", "4");
        etcdctl("put", p + "blocks/ns/00aa", "x");
        etcdctl("put", p + "publisher/cursor", "18");
        Run show = run("admin", "show", "--cluster", "legacy", "--etcd", url);
        assertThat(show.exit()).as(show.err()).isEqualTo(0);
        assertThat(show.out()).contains("(NOT orbitkv/inventory-stream/v4)")
                .contains("  retire (2):\n    " + p + "blocks/ns/00aa\n    " + p + "publisher/cursor\n")
                .contains(p + "epochs/n1 = '4'");
        Path backup = dir.resolve("b.json");
        Run noBackup = run("admin", "cutover", "--cluster", "legacy", "--etcd", url, "--backup", backup.toString());
        assertThat(noBackup.exit()).isEqualTo(AdminCommand.REFUSED);
        assertThat(noBackup.err()).startsWith("refused BACKUP_MISSING:");
        Run b = run("admin", "backup", "--cluster", "legacy", "--etcd", url, "--out", backup.toString());
        assertThat(b.exit()).as(b.err()).isEqualTo(0);
        assertThat(b.out()).contains("keys=4");
        Run cut = run("admin", "cutover", "--cluster", "legacy", "--etcd", url, "--backup", backup.toString());
        assertThat(cut.exit()).as(cut.err()).isEqualTo(0);
        assertThat(cut.out()).contains("retired " + p + "blocks/ns/00aa\nretired " + p + "publisher/cursor\n")
                .contains("-> 'protocol = orbitkv/inventory-stream/v4\\ncluster_uuid = 6f1c1c44-0000-4000-8000-00000000abcd\\n'");
        Run roll = run("admin", "rollback", "--cluster", "legacy", "--etcd", url, "--backup", backup.toString());
        assertThat(roll.exit()).as(roll.err()).isEqualTo(0);
        assertThat(roll.out()).contains("-> 'protocol = orbitkv/etcd-block-publisher/v3").contains("epoch kept " + p + "epochs/n1 = '4'");
        Run prune = run("admin", "prune-epochs", "--cluster", "legacy", "--etcd", url, "--inactive-for", "30d");
        assertThat(prune.exit()).as(prune.err()).isEqualTo(0);
        assertThat(prune.out()).contains("kept n1 (issue time unknown: legacy epoch value)").contains("epoch floor 0");
    }
}
