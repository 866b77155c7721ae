package orbitkv.server.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import orbitkv.server.config.ConfigException;
import orbitkv.server.config.ConfigFile;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;
import orbitkv.server.runtime.StandaloneManager;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import sun.misc.Signal;

/**
 * {@code orbitkv manager} (DESIGN §7 CLI). Every option comes from the {@link Setting} table (one source of
 * truth for names, defaults and docs), added by {@link Options}; {@code --config FILE} reads the same
 * settings from JSON, flags winning. Validation happens once in {@link ManagerConfig#from}; a refusal exits
 * 2 with the message naming the options (BND-6).
 *
 * <p>This build serves {@code --standalone} only: the distributed mode needs the membership, inventory and
 * index wiring, and is refused explicitly (exit 1) instead of pretending. SIGTERM and SIGINT stop
 * admission, drain and exit 0.
 */
@Command(name = "manager", modelTransformer = ManagerCommand.Options.class, mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "Run an OrbitKV Manager: DRAM/SSD tiers and the HTTP API.")
final class ManagerCommand implements Callable<Integer> {
    @Option(names = "--config", paramLabel = "FILE", description = "JSON file of settings keyed by option name; flags win.")
    Path configFile;

    @CommandLine.Spec
    CommandSpec spec;

    /** Adds one option per {@link Setting}. */
    static final class Options implements CommandLine.IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            for (Setting s : Setting.values()) {
                OptionSpec.Builder b = OptionSpec.builder(s.flag()).description(s.doc()
                        + (s.defaultValue() == null || s.kind() == Setting.Kind.FLAG ? "" : " Default: " + s.defaultValue() + "."));
                switch (s.kind()) {
                    case FLAG -> b.type(boolean.class).arity("0");
                    case TEXT_LIST -> b.type(List.class).auxiliaryTypes(String.class).arity("1").paramLabel("NS");
                    case SIZE -> b.type(String.class).paramLabel("SIZE");
                    case MS -> b.type(String.class).paramLabel("MS");
                    case COUNT -> b.type(String.class).paramLabel("N");
                    case TEXT -> b.type(String.class).paramLabel(s.name().replace('_', '-'));
                }
                spec.addOption(b.build());
            }
            return spec;
        }
    }

    @Override
    public Integer call() throws Exception {
        ManagerConfig config;
        try {
            RawValues flags = flags();
            RawValues values = configFile == null ? flags : ConfigFile.read(configFile).overlay(flags);
            config = ManagerConfig.from(values);
        } catch (ConfigException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", config.logLevel().toLowerCase(java.util.Locale.ROOT));
        if (!config.standalone()) {
            spec.commandLine().getErr().println("orbitkv manager: the distributed mode (--cluster/--etcd) needs the "
                    + "membership and inventory wiring, which this build does not contain yet; run with --standalone");
            return 1;
        }
        StandaloneManager manager = StandaloneManager.start(config);
        Runnable stop = () -> Thread.ofPlatform().name("orbitkv-shutdown").start(() -> {
            try {
                manager.shutdown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Signal.handle(new Signal("TERM"), sig -> stop.run());
        Signal.handle(new Signal("INT"), sig -> stop.run());
        spec.commandLine().getOut().println(manager.readyLine());
        spec.commandLine().getOut().flush();
        manager.awaitStopped();
        return 0;
    }

    private RawValues flags() {
        RawValues raw = new RawValues();
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        for (Setting s : Setting.values()) {
            if (!parsed.hasMatchedOption(s.flag())) {
                continue;
            }
            if (s.kind() == Setting.Kind.FLAG) {
                raw.put(s, "true");
            } else {
                raw.put(s, parsed.matchedOption(s.flag()).stringValues());
            }
        }
        return raw;
    }
}
