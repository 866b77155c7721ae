package orbitkv.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The {@code orbitkv manager} CLI contract: options from the Setting table, refusals naming the options. */
@Tag("unit")
class ManagerCommandTest {
    private record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = OrbitKvCommand.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return new Run(cli.execute(args), out.toString(), err.toString());
    }

    @Test
    @DisplayName("BND-6 API-3 --standalone with --etcd is refused at startup with exit 2 naming both options")
    void standaloneWithEtcd() {
        Run r = run("manager", "--standalone", "--etcd", "http://127.0.0.1:2379");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--standalone and --etcd cannot be combined");
    }

    @Test
    @DisplayName("BND-6 IDX-4 --metadata-empty-scope with --metadata-namespace is refused with exit 2")
    void emptyScopeWithNamespace() {
        Run r = run("manager", "--standalone", "--metadata-empty-scope", "--metadata-namespace", "a");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--metadata-empty-scope and --metadata-namespace cannot be combined");
    }

    @Test
    @DisplayName("MEM-8 an unreachable etcd refuses the Manager at startup (exit 1) naming the endpoints")
    void etcdUnavailable() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        Run r = run("manager", "--cluster", "c1", "--node-id", "n1", "--etcd", "http://127.0.0.1:" + port,
                "--http-listen", "127.0.0.1:0", "--dram", "1MiB", "--block-bytes-max", "64KiB",
                "--lease-ttl-ms", "2000", "--fence-safety-margin-ms", "500", "--renewal-interval-ms", "500",
                "--etcd-call-timeout-ms", "300");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("did not answer the registration");
    }

    @Test
    @DisplayName("BND-6 a missing config file is refused with exit 2 naming --config")
    void missingConfigFile() {
        Run r = run("manager", "--config", "/nonexistent/orbitkv.json");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--config /nonexistent/orbitkv.json cannot be read");
    }

    @Test
    @DisplayName("--help lists the DESIGN §7 options and the §9 settings with their defaults")
    void help() {
        Run r = run("manager", "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("--dram=SIZE").contains("--metadata-namespace=NS").contains("--standalone")
                .contains("--ssd-dir").contains("--config=FILE").contains("--freshness-budget-ms=MS").contains("Default: 5000.");
    }
}
