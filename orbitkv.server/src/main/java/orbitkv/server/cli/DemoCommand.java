package orbitkv.server.cli;

import java.util.concurrent.Callable;
import orbitkv.server.demo.DemoWorkload;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv demo} (DESIGN §7 CLI): a local etcd and Managers on loopback running a workload with known
 * payloads, progress lines and a summary table; everything started is stopped. Exit 0 when no error was
 * observed. Parts that need the InventorySession are marked in the output.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Run a local etcd and Managers on loopback with a demo workload, then stop them.")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--managers", defaultValue = "3", description = "Managers to start (2..5). Default: ${DEFAULT-VALUE}.")
    int managers;

    @Option(names = "--blocks", defaultValue = "32", description = "Blocks saved per Manager (1..128). Default: ${DEFAULT-VALUE}.")
    int blocks;

    @Option(names = "--block-bytes", defaultValue = "65536", description = "Payload bytes per block (16..1048576). Default: ${DEFAULT-VALUE}.")
    int blockBytes;

    @Option(names = "--etcd-binary", defaultValue = "etcd", description = "The etcd executable. Default: ${DEFAULT-VALUE}.")
    String etcdBinary;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        DemoWorkload.Options options;
        try {
            options = new DemoWorkload.Options(managers, blocks, blockBytes, etcdBinary);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        return new DemoWorkload(options, System.out).run();
    }
}
