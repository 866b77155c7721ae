package orbitkv.server.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.MembershipAdmin;
import orbitkv.membership.MembershipAdmin.KeyEntry;
import orbitkv.server.config.ConfigException;
import orbitkv.server.config.EtcdOptions;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv admin}: the offline membership tool (DESIGN §3, §7 CLI contract; the design's
 * <i>Cutover, rollback and handoff</i>). Exit codes: 0 done, 2 bad usage (picocli, message names the
 * option), 3 refused (a {@link MembershipAdmin.Refusal}: nothing was changed; the reason is printed).
 */
@Command(name = "admin", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Offline membership tool: format, show, backup, cutover, rollback, prune-epochs.",
        subcommands = {AdminCommand.Format.class, AdminCommand.Show.class, AdminCommand.Backup.class,
                AdminCommand.Cutover.class, AdminCommand.Rollback.class, AdminCommand.PruneEpochs.class})
final class AdminCommand implements Runnable {
    /** Exit code of a refusal. */
    static final int REFUSED = 3;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "an admin subcommand is required");
    }

    /** The options every admin subcommand takes. */
    static final class Target {
        @Option(names = "--cluster", required = true, converter = ClusterNameConverter.class,
                description = "Cluster name: 1..64 characters of [A-Za-z0-9._-].")
        String cluster;

        @Option(names = "--etcd", required = true,
                description = "Comma-separated etcd client URLs http://host:port (https://host:port with the TLS files).")
        String etcd;

        @Option(names = "--etcd-ca-file", description = "PEM CA certificate(s) trusted for the etcd servers (https).")
        Path etcdCaFile;

        @Option(names = "--etcd-cert-file", description = "PEM client certificate presented to etcd.")
        Path etcdCertFile;

        @Option(names = "--etcd-key-file", description = "PEM PKCS#8 private key of --etcd-cert-file.")
        Path etcdKeyFile;

        @Option(names = "--etcd-timeout-ms", defaultValue = "5000",
                description = "Deadline of each etcd call in milliseconds (1..600000). Default: ${DEFAULT-VALUE}.")
        long timeoutMs;

        /** Validates every option (the same etcd rules and messages as {@code orbitkv manager}), then connects. */
        MembershipAdmin connect(CommandLine cl) {
            if (timeoutMs < 1 || timeoutMs > 600_000) {
                throw new CommandLine.ParameterException(cl, "--etcd-timeout-ms must be 1..600000, got " + timeoutMs);
            }
            EtcdEndpoints endpoints;
            try {
                endpoints = EtcdOptions.parse(etcd, etcdCaFile, etcdCertFile, etcdKeyFile);
            } catch (ConfigException e) {
                throw new CommandLine.ParameterException(cl, e.getMessage());
            }
            return MembershipAdmin.connect(endpoints, cluster, timeoutMs);
        }
    }

    /** Shared body: connect, run, print the result or the refusal. */
    abstract static class Sub implements Callable<Integer> {
        @Mixin
        Target target;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        abstract Object run(MembershipAdmin admin);

        abstract void print(Object result, PrintWriter out);

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (MembershipAdmin admin = target.connect(spec.commandLine())) {
                Object result = run(admin);
                if (result instanceof MembershipAdmin.Refusal r) {
                    PrintWriter err = spec.commandLine().getErr();
                    err.println("refused " + r.reason() + ": " + r.detail());
                    err.flush();
                    return REFUSED;
                }
                print(result, out);
                out.flush();
                return 0;
            }
        }
    }

    @Command(name = "format", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
            description = "Create the format record with a new random cluster UUID; refuses if one exists.")
    static final class Format extends Sub {
        @Override
        Object run(MembershipAdmin admin) {
            return admin.format();
        }

        @Override
        void print(Object result, PrintWriter out) {
            var f = (MembershipAdmin.Formatted) result;
            out.println("formatted " + f.formatKey() + " cluster=" + f.cluster().name() + " cluster_uuid="
                    + f.cluster().uuid() + " protocol=" + ClusterIdentity.PROTOCOL + " revision=" + f.revision());
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
            description = "Dry run: the format, members, epochs, every other key, and what a cutover would touch.")
    static final class Show extends Sub {
        @Override
        Object run(MembershipAdmin admin) {
            return admin.show();
        }

        @Override
        void print(Object result, PrintWriter out) {
            var r = (MembershipAdmin.NamespaceReport) result;
            out.println("prefix " + r.prefix() + " at revision " + r.revision());
            out.println("format: " + r.format().map(f -> quote(f.value()) + " mod_revision=" + f.modRevision()
                    + (r.formatIsCurrent() ? " (current: " + ClusterIdentity.PROTOCOL + ")" : " (NOT " + ClusterIdentity.PROTOCOL + ")"))
                    .orElse("absent (run `orbitkv admin format`)"));
            section(out, "members", r.members(), r.liveLeaseKeys());
            section(out, "epochs", r.epochs(), java.util.List.of());
            section(out, "other keys (old block/publisher keys)", r.otherKeys(), r.liveLeaseKeys());
            out.println("cutover plan:");
            out.println("  format: " + r.plan().formatFrom().map(AdminCommand::quote).orElse("-") + " -> "
                    + r.plan().formatTo().map(AdminCommand::quote).orElse("(no change)"));
            out.println("  retire (" + r.plan().keysToRetire().size() + "):");
            r.plan().keysToRetire().forEach(k -> out.println("    " + k));
            out.println("  blockers (" + r.plan().blockers().size() + "):");
            r.plan().blockers().forEach(b -> out.println("    " + b));
        }

        private static void section(PrintWriter out, String title, java.util.List<KeyEntry> entries, java.util.List<String> live) {
            out.println(title + " (" + entries.size() + "):");
            for (KeyEntry e : entries) {
                out.println("  " + e.key() + " = " + quote(e.value()) + " mod_revision=" + e.modRevision()
                        + (e.lease() == 0 ? "" : " lease=" + Long.toHexString(e.lease()) + (live.contains(e.key()) ? " (live)" : " (expired)")));
            }
        }
    }

    @Command(name = "backup", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
            description = "Write every key under the cluster prefix, read at one revision, to a file.")
    static final class Backup extends Sub {
        @Option(names = "--out", required = true, description = "Backup file to write (replaced atomically).")
        Path out;

        @Override
        Object run(MembershipAdmin admin) {
            return admin.backup(out);
        }

        @Override
        void print(Object result, PrintWriter o) {
            var b = (MembershipAdmin.BackupWritten) result;
            o.println("backup " + b.file() + " keys=" + b.keys() + " revision=" + b.revision());
        }
    }

    @Command(name = "cutover", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
            description = "Old format -> v4 (exact CAS); refuses while leases are live or without a current backup.")
    static final class Cutover extends Sub {
        @Option(names = "--backup", required = true, description = "Backup of the current (old-format) namespace, from `orbitkv admin backup`.")
        Path backup;

        @Override
        Object run(MembershipAdmin admin) {
            return admin.cutover(backup);
        }

        @Override
        void print(Object result, PrintWriter out) {
            var c = (MembershipAdmin.CutOver) result;
            out.println("cutover " + quote(c.oldFormat()) + " -> " + quote(c.newFormat()));
            c.retired().forEach(k -> out.println("retired " + k));
            c.kept().forEach(k -> out.println("kept " + k + " (changed since the backup)"));
        }
    }

    @Command(name = "rollback", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
            description = "v4 -> the old format held by a backup (exact CAS); epochs are never decreased.")
    static final class Rollback extends Sub {
        @Option(names = "--backup", required = true, description = "The backup taken before the cutover.")
        Path backup;

        @Override
        Object run(MembershipAdmin admin) {
            return admin.rollback(backup);
        }

        @Override
        void print(Object result, PrintWriter out) {
            var r = (MembershipAdmin.RolledBack) result;
            out.println("rollback " + quote(r.replacedFormat()) + " -> " + quote(r.restoredFormat()));
            r.epochs().forEach(e -> out.println("epoch kept " + e.key() + " = " + quote(e.value())));
        }
    }

    @Command(name = "prune-epochs", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
            description = "Delete epoch keys of nodes inactive for a duration, raising the epoch floor first.")
    static final class PruneEpochs extends Sub {
        @Option(names = "--inactive-for", required = true, converter = DurationConverter.class,
                description = "Minimum inactivity, e.g. 30d, 12h, 90m, 45s or ISO-8601 (P30D).")
        Duration inactiveFor;

        @Override
        Object run(MembershipAdmin admin) {
            return admin.pruneEpochs(inactiveFor);
        }

        @Override
        void print(Object result, PrintWriter out) {
            var p = (MembershipAdmin.Pruned) result;
            p.nodes().forEach(n -> out.println("pruned " + n));
            p.kept().forEach(n -> out.println("kept " + n));
            out.println("epoch floor " + p.floorEpoch());
        }
    }

    static String quote(String v) {
        return "'" + v.replace("\\", "\\\\").replace("\n", "\\n") + "'";
    }

    static final class ClusterNameConverter implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                return new ClusterIdentity(value, new UUID(0, 0)).name();
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** {@code <n>d|h|m|s} or ISO-8601; positive only. */
    static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            Duration d;
            try {
                String v = value.strip().toLowerCase(Locale.ROOT);
                if (v.matches("[0-9]{1,9}[dhms]")) {
                    long n = Long.parseLong(v.substring(0, v.length() - 1));
                    d = switch (v.charAt(v.length() - 1)) {
                        case 'd' -> Duration.ofDays(n);
                        case 'h' -> Duration.ofHours(n);
                        case 'm' -> Duration.ofMinutes(n);
                        default -> Duration.ofSeconds(n);
                    };
                } else {
                    d = Duration.parse(value.strip());
                }
            } catch (RuntimeException e) {
                throw new CommandLine.TypeConversionException("must be <n>d, <n>h, <n>m, <n>s or ISO-8601, got '" + value + "'");
            }
            if (d.isNegative() || d.isZero()) {
                throw new CommandLine.TypeConversionException("must be positive, got '" + value + "'");
            }
            return d;
        }
    }
}
