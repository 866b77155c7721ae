package orbitkv.server.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import orbitkv.server.config.ConfigException;
import orbitkv.server.config.ConfigFile;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;
import orbitkv.server.http.HttpApiServer;
import orbitkv.server.runtime.DistributedManager;
import orbitkv.server.runtime.RunningManager;
import orbitkv.server.runtime.StandaloneManager;
import orbitkv.server.tier.LocalResourceRefused;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * {@code orbitkv manager} (DESIGN §7 CLI). Every option comes from the {@link Setting} table (one source of
 * truth for names, defaults and docs), added by {@link Options}; {@code --config FILE} reads the same
 * settings from JSON, flags winning. Validation happens once in {@link ManagerConfig#from}; a refusal exits
 * 2 with the message naming the options (BND-6).
 *
 * <p>With {@code --standalone} it runs without etcd; otherwise it registers with etcd and wires membership,
 * the source inventory and the GlobalIndex ({@link DistributedManager}); a refused registration (unformatted
 * cluster, format or cluster mismatch, etcd unavailable) exits 1 with the reason. SIGTERM and SIGINT stop
 * admission, drain, deregister and exit 0.
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
        // Signal handlers before anything starts: a SIGTERM that arrives while the Manager starts is
        // remembered and honoured as soon as it runs (exit 0), never left to the JVM's default (exit 143).
        StopRequest stopRequest = new StopRequest();
        SignalHandler previousTerm = Signal.handle(new Signal("TERM"), sig -> stopRequest.request());
        SignalHandler previousInt = Signal.handle(new Signal("INT"), sig -> stopRequest.request());
        RunningManager manager = null;
        try {
            if (config.standalone()) {
                manager = StandaloneManager.start(config, HttpApiServer::bind);
            } else {
                switch (DistributedManager.start(config, HttpApiServer::bind)) {
                    case DistributedManager.Start.Started s -> manager = s.manager();
                    case DistributedManager.Start.Refused r -> {
                        spec.commandLine().getErr().println("orbitkv manager: " + r.message());
                        return r.exitCode();
                    }
                }
            }
        } catch (LocalResourceRefused e) { // SSD directory held by another Manager, or bounds beyond -Xmx (issue 20)
            spec.commandLine().getErr().println("orbitkv manager: " + e.getMessage());
            return 1;
        } finally {
            if (manager == null) { // not started: give the signals back (the process is about to exit)
                Signal.handle(new Signal("TERM"), previousTerm);
                Signal.handle(new Signal("INT"), previousInt);
            }
        }
        spec.commandLine().getOut().println(manager.readyLine());
        spec.commandLine().getOut().flush();
        stopRequest.attach(manager);
        manager.awaitStopped();
        return 0;
    }

    /**
     * SIGTERM/SIGINT: stop admission, drain, deregister, exit 0. A request that arrives before the Manager
     * runs is kept and executed on {@link #attach}. The stop runs on its own thread, never on the signal
     * dispatcher.
     */
    static final class StopRequest {
        private RunningManager manager;
        private boolean requested;

        synchronized void request() {
            requested = true;
            if (manager != null) {
                stop(manager);
            }
        }

        synchronized void attach(RunningManager m) {
            manager = m;
            if (requested) {
                stop(m);
            }
        }

        private static void stop(RunningManager m) {
            Thread.ofPlatform().name("orbitkv-shutdown").start(() -> {
                try {
                    m.shutdown();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
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
