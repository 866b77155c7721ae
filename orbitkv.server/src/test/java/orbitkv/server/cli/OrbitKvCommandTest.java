package orbitkv.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The CLI contract (DESIGN §7): names, refusals with the option named, exit codes. */
@Tag("unit")
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
    @DisplayName("issue 18.4: every command and subcommand answers --help (and -h) with exit 0 and its usage")
    void everyCommandAnswersHelp() {
        List<List<String>> paths = new ArrayList<>();
        collect(OrbitKvCommand.commandLine(), new ArrayList<>(), paths);
        assertThat(paths).extracting(p -> String.join(" ", p))
                .contains("", "manager", "admin", "admin show", "admin format", "admin prune-epochs", "demo", "selftest");
        for (List<String> path : paths) {
            for (String flag : List.of("--help", "-h")) {
                List<String> args = new ArrayList<>(path);
                args.add(flag);
                Run r = run(args.toArray(String[]::new));
                assertThat(r.exit()).as("orbitkv %s: %s", args, r.err()).isZero();
                assertThat(r.out()).as("orbitkv %s", args).contains("Usage: orbitkv" + (path.isEmpty() ? "" : " " + String.join(" ", path)));
            }
        }
    }

    private static void collect(CommandLine cl, List<String> path, List<List<String>> out) {
        if (cl.getCommand() instanceof CommandLine.HelpCommand) {
            return; // `orbitkv help` is the help itself
        }
        out.add(List.copyOf(path));
        for (var e : cl.getSubcommands().entrySet()) {
            List<String> sub = new ArrayList<>(path);
            sub.add(e.getKey());
            collect(e.getValue(), sub, out);
        }
    }

    @Test
    @DisplayName("help lists the subcommands")
    void help() {
        Run r = run("help");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("selftest");
    }
}
