package orbitkv.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The CLI contract (DESIGN §7): names, refusals with the option named, exit codes. */
class OrbitKvCommandTest {
    private record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = OrbitKvCommand.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int exit = cli.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    @DisplayName("--version prints version, protocol and the boot-layer module list")
    void version() {
        Run r = run("--version");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("protocol orbitkv/inventory-stream/v4").contains("boot layer modules:")
                .contains("java.base");
    }

    @Test
    @DisplayName("an unknown option is refused with exit 2 and a message naming it")
    void unknownOption() {
        Run r = run("--no-such-option");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--no-such-option");
    }

    @Test
    @DisplayName("a bad value is refused with exit 2 and a message naming the option")
    void badValue() {
        Run r = run("selftest", "--timeout-ms", "soon");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--timeout-ms").contains("soon");
    }

    @Test
    @DisplayName("an out-of-range value is refused with exit 2 and the bound named")
    void outOfRange() {
        Run r = run("selftest", "--timeout-ms", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--timeout-ms must be 1..600000, got 0");
    }

    @Test
    @DisplayName("no subcommand is a usage error, not a silent success")
    void noSubcommand() {
        Run r = run();
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("a subcommand is required");
    }

    @Test
    @DisplayName("help lists the subcommands")
    void help() {
        Run r = run("help");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("selftest");
    }
}
