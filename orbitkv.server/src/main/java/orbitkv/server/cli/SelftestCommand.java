package orbitkv.server.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv selftest}: proves, inside the runtime image, what only a run of the image can prove
 * (NOTES: tests see a different module path): protobuf reflection, the Netty native transport, a gRPC
 * bidirectional round trip on loopback over that transport, and a jetcd client's construction and
 * close. Exit 0 only if every check passed.
 */
@Command(name = "selftest", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Check the runtime image: protobuf, Netty native transport, gRPC, jetcd.")
final class SelftestCommand implements Callable<Integer> {
    @Option(names = "--timeout-ms", defaultValue = "10000",
            description = "Bound on each check in milliseconds (1..600000). Default: ${DEFAULT-VALUE}.")
    long timeoutMs;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (timeoutMs < 1 || timeoutMs > 600_000) {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "--timeout-ms must be 1..600000, got " + timeoutMs);
        }
        return new Selftest(System.out, timeoutMs).run();
    }
}
