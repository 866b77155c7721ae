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
        privateNativeWorkdir();
        Logging.install();
        System.exit(commandLine().execute(args));
    }

    /**
     * Netty unpacks its native libraries (epoll, io_uring, netty-tcnative's BoringSSL) into {@code io.netty.native.workdir}
     * (default: the shared temporary directory) before loading them. Unless the operator set it, point it at a fresh
     * directory only this user can enter (created 0700 by {@link java.nio.file.Files#createTempDirectory}), so no other
     * local user can plant or swap a library between its extraction and its load (issue 33; docs/security.md "Files").
     * Netty deletes each library right after loading it; the empty directory is removed at exit.
     */
    static void privateNativeWorkdir() {
        if (System.getProperty("io.netty.native.workdir") != null) {
            return;
        }
        try {
            java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("orbitkv-native-");
            dir.toFile().deleteOnExit();
            System.setProperty("io.netty.native.workdir", dir.toString());
        } catch (java.io.IOException | UnsupportedOperationException e) {
            System.err.println("orbitkv: cannot create a private directory for Netty's native libraries (" + e.getMessage()
                    + "); they are unpacked into the temporary directory");
        }
    }
}
