package orbitkv.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code orbitkv}: the one launcher of the runtime image (DESIGN §7, CLI contract). Subcommands are the
 * operator contract; unknown options and bad values are refused by picocli with a message naming the
 * option and exit code 2.
 */
@Command(
        name = "orbitkv",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "OrbitKV Manager, admin tool and self-test.",
        subcommands = {ManagerCommand.class, AdminCommand.class, DemoCommand.class, SelftestCommand.class,
                CommandLine.HelpCommand.class})
public final class OrbitKvCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required");
    }

    /** Builds the command line with the project's error handling; separate for tests. */
    public static CommandLine commandLine() {
        return new CommandLine(new OrbitKvCommand()).setCaseInsensitiveEnumValuesAllowed(false);
    }

    public static void main(String[] args) {
        Logging.install();
        System.exit(commandLine().execute(args));
    }
}
