package orbitkv.server.cli;

import java.io.PrintWriter;
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

    /**
     * Builds the command line with the project's error handling; separate for tests. A usage error prints the
     * message (naming the option), picocli's suggestions for a mistyped option, and where the full usage is;
     * not the whole usage, which would push the message off an operator's screen ({@code orbitkv manager}
     * has some seventy options).
     */
    public static CommandLine commandLine() {
        return new CommandLine(new OrbitKvCommand()).setCaseInsensitiveEnumValuesAllowed(false)
                .setParameterExceptionHandler(OrbitKvCommand::usageError);
    }

    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cl = e.getCommandLine();
        PrintWriter err = cl.getErr();
        err.println(e.getMessage());
        CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
        err.println("Try '" + cl.getCommandSpec().qualifiedName() + " --help' for the usage.");
        err.flush();
        return cl.getCommandSpec().exitCodeOnInvalidInput();
    }

    public static void main(String[] args) {
        NativeWorkdir.install();
        Logging.install();
        System.exit(commandLine().execute(args));
    }
}
