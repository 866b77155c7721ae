package orbitkv.conformance.kit;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.EtcdTls;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv conformance}: the conformance kit as a product (docs/conformance-kit.md). It runs the
 * adversarial source and requester scenarios of {@code adversarial.table} against a target given by address
 * only (peer gRPC endpoint, HTTP API v1, etcd endpoints and cluster name), prints one line per scenario and
 * writes a JUnit XML report. Launched as {@code bin/orbitkv-conformance} in the runtime image and as
 * {@code ./orbitkv conformance} from a checkout.
 */
@Command(name = "orbitkv conformance", mixinStandardHelpOptions = true, versionProvider = ConformanceCommand.Version.class,
        sortOptions = false, usageHelpWidth = 110,
        description = {
            "Runs the InventorySession v4 conformance scenarios (the adversarial source and requester rows of "
                    + "adversarial.table) black-box against a running implementation: the kit registers its own members in the "
                    + "target's etcd cluster, speaks the wire to the target's peer listener and to the target's requester, and "
                    + "observes the target only through the wire and its HTTP API v1 (/cache/metadata/status, /metrics, "
                    + "/cache/save, /cache/query, /cache/evict).",
            "Prints one line per scenario: PASS, FAIL, N/A, NOT-OBSERVABLE, or for a policy row (what the design permits "
                    + "but does not require) POLICY-PASS or POLICY-DIFFERS, never a failure; the side/scenario, the rule IDs it "
                    + "checks and the outcome or reason, then a summary line; writes a JUnit XML report. Every row has a hard "
                    + "deadline (--row-deadline-ms) and the run a wall bound (--run-deadline-ms). The target must be otherwise "
                    + "quiet during the run (no other saves on it). See docs/conformance-kit.md."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:every applicable scenario passed", "1:at least one scenario failed",
            "2:bad options (the message names the option)",
            "3:set-up failed: target or etcd unreachable, another cluster or protocol, listener address in use"})
public final class ConformanceCommand implements Callable<Integer> {
    static final int EXIT_FAILED = 1;
    static final int EXIT_SETUP = 3;

    @Option(names = "--target-peer", required = true, paramLabel = "HOST:PORT", converter = EndpointConverter.class,
            description = "The target's peer gRPC listener (InventorySession v4).")
    Endpoint targetPeer;

    @Option(names = "--target-http", required = true, paramLabel = "URL", converter = UriConverter.class,
            description = "Base URL of the target's HTTP API v1, e.g. http://127.0.0.1:8090.")
    URI targetHttp;

    @Option(names = "--etcd", required = true, paramLabel = "URLS",
            description = "Comma-separated etcd client URLs of the target's cluster (http://host:port, or https:// with --etcd-ca).")
    String etcd;

    @Option(names = "--cluster", required = true, paramLabel = "NAME", converter = ClusterNameConverter.class,
            description = "The cluster name (etcd prefix /orbitkv/v2/NAME/); must be the target's.")
    String cluster;

    @Option(names = "--etcd-ca", paramLabel = "FILE", description = "PEM CA bundle of the etcd servers (TLS; with --etcd-cert and --etcd-key).")
    Path etcdCa;

    @Option(names = "--etcd-cert", paramLabel = "FILE", description = "PEM client certificate for etcd (TLS).")
    Path etcdCert;

    @Option(names = "--etcd-key", paramLabel = "FILE", description = "PEM PKCS#8 client key for etcd (TLS).")
    Path etcdKey;

    @Option(names = "--peer-tls-dir", paramLabel = "DIR",
            description = "Peer mutual TLS (with --peer-tls-ca-file), for a target run with --peer-tls-*: DIR/<node-id>.pem and "
                    + "DIR/<node-id>.key for every kit member, each certificate naming its node as the URI SAN "
                    + "urn:orbitkv:node:<node-id>: PREFIX-src, PREFIX-req-1..3 (..N+1 with --target-source-sessions-max N) and "
                    + "PREFIX-req-unregistered. See docs/conformance-kit.md.")
    Path peerTlsDir;

    @Option(names = "--peer-tls-ca-file", paramLabel = "FILE",
            description = "PEM CA bundle of the cluster's peer certificates (with --peer-tls-dir).")
    Path peerTlsCa;

    @Option(names = "--listen", defaultValue = "127.0.0.1:0", paramLabel = "HOST:PORT", converter = ListenConverter.class,
            description = "Where the kit's own source listener binds (the target dials it as the kit's members' peer "
                    + "endpoint); port 0 picks a free port. Default: ${DEFAULT-VALUE}.")
    InetSocketAddress listen;

    @Option(names = "--advertise", paramLabel = "HOST:PORT", converter = EndpointConverter.class,
            description = "The peer endpoint the kit's members advertise in etcd, if the target must dial another address "
                    + "than --listen (required when --listen is a wildcard address). Default: the --listen host and bound port.")
    Endpoint advertise;

    @Option(names = "--report", defaultValue = "orbitkv-conformance-report.xml", paramLabel = "FILE",
            description = "JUnit XML report file (replaced atomically). Default: ${DEFAULT-VALUE}.")
    Path report;

    @Option(names = "--skip-policy", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Skip rows tagged policy:* (outcomes that depend on this implementation's accounting, not on the "
                    + "protocol); they are reported N/A. --no-skip-policy runs them (for OrbitKV-Java targets). Default: ${DEFAULT-VALUE}.")
    boolean skipPolicy;

    @Option(names = "--only", paramLabel = "SIDE/SCENARIO", split = ",",
            description = "Run only these scenarios (repeatable or comma-separated), e.g. source/wrong_protocol.")
    List<String> only = new ArrayList<>();

    @Option(names = "--member-prefix", defaultValue = "orbitkv-kit", paramLabel = "PREFIX",
            description = "Node-id prefix of the kit's members (PREFIX-req-1..3, PREFIX-src). Default: ${DEFAULT-VALUE}.")
    String memberPrefix;

    @Option(names = "--wait-ms", defaultValue = "5000", paramLabel = "MS",
            description = "Bound of each wait for an answer or a state change of the target. Default: ${DEFAULT-VALUE}.")
    long waitMs;

    @Option(names = "--target-frame-encoded-bytes-max", defaultValue = "1MiB", paramLabel = "SIZE", converter = SizeConverter.class,
            description = "The target requester's encoded frame bound (bytes, or KiB/MiB suffix). Default: ${DEFAULT-VALUE}.")
    long targetFrameEncodedBytesMax;

    @Option(names = "--target-frame-decoded-bytes-max", defaultValue = "4MiB", paramLabel = "SIZE", converter = SizeConverter.class,
            description = "The target requester's decoded frame bound. Default: ${DEFAULT-VALUE}.")
    long targetFrameDecodedBytesMax;

    @Option(names = "--target-idle-liveness-ms", defaultValue = "1000", paramLabel = "MS",
            description = "The target source's idle liveness interval. Default: ${DEFAULT-VALUE}.")
    long targetIdleLivenessMs;

    @Option(names = "--target-source-sessions-max", paramLabel = "N",
            description = "The target source's served-session limit, if known and small (the kit then opens N sessions and one "
                    + "more); without it source/session_limit is N/A.")
    Integer targetSourceSessionsMax;

    @Option(names = "--row-deadline-ms", defaultValue = "" + KitSettings.ROW_DEADLINE_MS_DEFAULT, paramLabel = "MS",
            description = "Hard deadline of every row, counted from its start, whatever the target sends: a row without its "
                    + "required outcome by then FAILS with what it saw (at least 2 x --wait-ms). Default: ${DEFAULT-VALUE}.")
    long rowDeadlineMs;

    @Option(names = "--run-deadline-ms", defaultValue = "" + KitSettings.RUN_DEADLINE_MS_DEFAULT, paramLabel = "MS",
            description = "Wall bound of the whole run: rows not started when it passes are reported FAIL with that reason; "
                    + "a running row's deadline is cut to it. Default: ${DEFAULT-VALUE}.")
    long runDeadlineMs;

    @Option(names = "--allow-fencing", defaultValue = "false",
            description = "Destructive, opt-in: the kit revokes the target's member lease in etcd to check INV-7 (fenced "
                    + "source and requester) black-box; the target fences itself and must heal as a new incarnation (or stays "
                    + "fenced with self-healing off). Without it those rows are N/A.")
    boolean allowFencing;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final PrintStream out;

    public ConformanceCommand() {
        this(System.out);
    }

    ConformanceCommand(PrintStream out) {
        this.out = out;
    }

    @Override
    public Integer call() throws InterruptedException {
        KitSettings settings;
        try {
            settings = settings();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        try {
            KitReport report = new KitRun(settings, out).run();
            return report.passed() ? 0 : EXIT_FAILED;
        } catch (KitRun.SetupException e) {
            spec.commandLine().getErr().println("orbitkv conformance: set-up failed: " + e.getMessage());
            return EXIT_SETUP;
        }
    }

    KitSettings settings() {
        boolean anyTls = etcdCa != null || etcdCert != null || etcdKey != null;
        if (anyTls && (etcdCa == null || etcdCert == null || etcdKey == null)) {
            throw new IllegalArgumentException("--etcd-ca, --etcd-cert and --etcd-key go together");
        }
        // the TLS files go in with the URLs: https:// endpoints parse only with them (found by KitTlsGateTest, issue 33)
        EtcdEndpoints endpoints = EtcdEndpoints.parse(etcd, anyTls ? Optional.of(new EtcdTls(etcdCa, etcdCert, etcdKey))
                : Optional.empty());
        if ((peerTlsDir == null) != (peerTlsCa == null)) {
            throw new IllegalArgumentException("--peer-tls-dir and --peer-tls-ca-file go together");
        }
        Optional<KitPeerTls> peerTls = peerTlsDir == null ? Optional.empty() : Optional.of(new KitPeerTls(peerTlsDir, peerTlsCa));
        return new KitSettings(targetPeer, targetHttp, endpoints, cluster, listen,
                Optional.ofNullable(advertise), report, skipPolicy, memberPrefix, Duration.ofMillis(waitMs), targetFrameEncodedBytesMax,
                targetFrameDecodedBytesMax, targetIdleLivenessMs,
                targetSourceSessionsMax == null ? OptionalInt.empty() : OptionalInt.of(targetSourceSessionsMax), only,
                Duration.ofMillis(rowDeadlineMs), Duration.ofMillis(runDeadlineMs), allowFencing, peerTls);
    }

    /** The command line with the kit's settings; separate for tests. */
    public static CommandLine commandLine(PrintStream out) {
        return new CommandLine(new ConformanceCommand(out));
    }

    public static void main(String[] args) {
        // Dependencies (jetcd, grpc, Netty) log through SLF4J: warnings only, so the report lines stay readable.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        System.exit(commandLine(System.out).execute(args));
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = ConformanceCommand.class.getModule().getDescriptor() == null ? "dev"
                    : ConformanceCommand.class.getModule().getDescriptor().rawVersion().orElse("dev");
            return new String[] {"orbitkv conformance " + v + " (protocol " + ClusterIdentity.PROTOCOL + ")"};
        }
    }

    static final class EndpointConverter implements CommandLine.ITypeConverter<Endpoint> {
        @Override
        public Endpoint convert(String value) {
            try {
                return Endpoint.parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("must be HOST:PORT: " + e.getMessage());
            }
        }
    }

    /** HOST:PORT where port 0 picks a free port ({@link Endpoint} itself requires 1..65535). */
    static final class ListenConverter implements CommandLine.ITypeConverter<InetSocketAddress> {
        @Override
        public InetSocketAddress convert(String value) {
            int colon = value.lastIndexOf(':');
            try {
                if (colon <= 0) {
                    throw new IllegalArgumentException("no port");
                }
                String host = value.substring(0, colon);
                int port = Integer.parseInt(value.substring(colon + 1));
                if (port < 0 || port > 65535) {
                    throw new IllegalArgumentException("port out of range");
                }
                return new InetSocketAddress(host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host, port);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("must be HOST:PORT with port 0..65535, got '" + value + "'");
            }
        }
    }

    static final class UriConverter implements CommandLine.ITypeConverter<URI> {
        @Override
        public URI convert(String value) {
            try {
                URI u = new URI(value.endsWith("/") ? value : value + "/");
                if (u.getHost() == null || !("http".equals(u.getScheme()) || "https".equals(u.getScheme()))) {
                    throw new IllegalArgumentException("not an http(s)://host:port URL");
                }
                return u;
            } catch (java.net.URISyntaxException | IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("must be http://HOST:PORT, got '" + value + "'");
            }
        }
    }

    static final class ClusterNameConverter implements CommandLine.ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                return new ClusterIdentity(value, new java.util.UUID(0, 0)).name();
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Bytes, or a number with a KiB/MiB/GiB suffix. */
    static final class SizeConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            String v = value.strip();
            long unit = 1;
            for (String[] s : new String[][] {{"KiB", "1024"}, {"MiB", "1048576"}, {"GiB", "1073741824"}}) {
                if (v.endsWith(s[0])) {
                    unit = Long.parseLong(s[1]);
                    v = v.substring(0, v.length() - 3);
                }
            }
            try {
                long n = Long.parseLong(v);
                if (n < 0) {
                    throw new NumberFormatException();
                }
                return Math.multiplyExact(n, unit);
            } catch (NumberFormatException | ArithmeticException e) {
                throw new CommandLine.TypeConversionException("must be a size in bytes or with a KiB/MiB/GiB suffix, got '"
                        + value + "'");
            }
        }
    }
}
