package orbitkv.server.config;

import static orbitkv.server.config.Setting.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeId;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.SelectionMode;
import orbitkv.recovery.TraceSampling;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.TransferConfig;

/**
 * The validated configuration of one Manager (DESIGN §7 CLI, §9 bounds). Built only by {@link #from}: one
 * validation pass that parses every value against its own bound, reads and checks the files the settings
 * name (TLS PEM files, the token file) and the tier directories' modes ({@link DataDirectory}), and then checks
 * every relation between settings in
 * {@link #validate}, including the relations the consumers (inventory, session, index, membership
 * configurations) enforce, each message naming the options as the operator typed them (BND-6). It finishes
 * before anything has a side effect (no file created, no etcd contacted): a ManagerConfig that exists is safe
 * to run, and building the consumers' configurations from it cannot fail.
 *
 * @param cluster cluster name, null when standalone without a name
 * @param nodeId node id
 * @param etcd etcd client URLs and client TLS (empty when standalone)
 * @param peerListen peer listener
 * @param httpListen HTTP listener
 * @param standalone run without etcd
 * @param scope the metadata subscription scope (IDX-4)
 * @param logLevel ERROR..TRACE
 * @param tiers tier settings
 * @param http HTTP settings
 * @param inventory DESIGN §9 settings passed to orbitkv.inventory
 * @param index DESIGN §9 settings passed to orbitkv.index
 * @param route DESIGN §9 settings passed to orbitkv.recovery
 * @param transfer DESIGN §8 settings passed to orbitkv.transfer ({@link #transferConfig()})
 * @param lease DESIGN §3 lease timing passed to orbitkv.membership ({@link #membershipConfig()})
 * @param peerTls mutual TLS of the peer listener and channels (empty: plaintext, the trusted-cluster posture)
 * @param heal how a fenced incarnation heals itself (issue 17 item 5)
 */
public record ManagerConfig(String cluster, NodeId nodeId, Optional<EtcdEndpoints> etcd, ListenAddress peerListen,
                            ListenAddress httpListen, boolean standalone, Scope scope, String logLevel,
                            Tiers tiers, Http http, Inventory inventory, Index index, Route route,
                            Lease lease, Optional<PeerTls> peerTls, Transfer transfer, Heal heal) {
    /** The await timeout cap of the API contract (API-4). */
    public static final long AWAIT_TIMEOUT_MS_CAP = 30_000;
    /** Node id of a standalone Manager started without --node-id. */
    public static final String STANDALONE_NODE_ID = "standalone";
    /**
     * The largest {@code --block-bytes-max} accepted (issue 35 item 1): 128 MiB, the largest block size the save,
     * local DRAM and SSD restore, peer TCP and shared-memory READ and SSD integrity paths are tested with end to
     * end (PeerRestoreGateTest.largeBlocks, the transfer backends' block-size rows). A larger value is refused at
     * start rather than run untested (INV-9: every frame has a bound).
     */
    public static final long BLOCK_BYTES_CEILING = 128L << 20;
    /** Framing bytes around one payload in a save body: u16 + 64-byte key + u32. */
    public static final long RECORD_FRAMING_BYTES_MAX = 70;
    /**
     * Bytes beyond the largest session message that gRPC still delivers to the session's own bounded
     * marshaller, which names an oversized frame (SES-10); anything larger is refused by gRPC from the
     * length prefix, before it is buffered.
     */
    public static final int PEER_MESSAGE_MARGIN_BYTES = 64 << 10;
    /** The largest {@code --source-sessions-max}: each served session holds a ledger and a stream. */
    public static final int SOURCE_SESSIONS_MAX_LIMIT = 65_536;
    private static final Set<String> LOG_LEVELS = Set.of("ERROR", "WARN", "INFO", "DEBUG", "TRACE");

    /**
     * Tier settings. {@code ssdDir} is null (and {@code ssdBytes} 0) when there is no SSD tier. Pins are
     * bounded by count and bytes per tier ({@code *PinsMax}, {@code *PinnedBytesMax}).
     */
    public record Tiers(long dramBytes, Path dramDir, int dramPinsMax, Path ssdDir, long ssdBytes, int ssdPinsMax,
                        int ssdQueueWritesMax, long ssdQueueBytesMax, long blockBytesMax, long dramPinnedBytesMax,
                        long ssdPinnedBytesMax, long restoreBytesInFlightMax) {
        public boolean hasSsd() {
            return ssdDir != null;
        }
    }

    /**
     * HTTP settings (docs/api.md, conventions).
     *
     * @param requestsInFlightMax request slots (admitted requests receiving a body or executing)
     * @param probesInFlightMax slots of /health and /metrics, apart from the request slots
     * @param bodyBytesInFlightMax body bytes admitted at once across connections
     * @param headerTimeoutMs deadline of a request line and headers after their first byte
     * @param bodyProgressMs window of the body progress rule
     * @param bodyProgressBytesMin bytes a body must deliver per window
     * @param idleTimeoutMs an idle keep-alive connection is closed after this
     * @param lingerMs after an early refusal, unread body bytes are discarded for at most this long
     * @param lingerBytesMax ... and at most this many bytes
     * @param pipelinedRequestsMax decoded requests waiting behind the executing one on one connection
     * @param token bearer token of the mutating endpoints (empty: none)
     * @param readToken bearer token of the reading endpoints (empty: reads are open); the write token is accepted too
     * @param bodyBytesInFlightPerClientMax body bytes admitted at once for one client address (issue 33)
     * @param tls TLS of the HTTP listener (empty: plaintext)
     * @param unixSocket path of the HTTP API's Unix-domain socket (empty: none)
     * @param unixSocketMode permissions of that socket file
     */
    public record Http(long saveBodyBytesMax, long jsonBodyBytesMax, int requestsInFlightMax, long shutdownDrainMs,
                       long awaitTimeoutMsMax, int awaitWaitersMax, int probesInFlightMax, long bodyBytesInFlightMax,
                       long headerTimeoutMs, long bodyProgressMs, long bodyProgressBytesMin, long idleTimeoutMs,
                       long lingerMs, long lingerBytesMax, int pipelinedRequestsMax, Optional<BearerToken> token,
                       Optional<BearerToken> readToken, long bodyBytesInFlightPerClientMax, Optional<HttpTls> tls,
                       Optional<Path> unixSocket, Set<PosixFilePermission> unixSocketMode) {
        public Http {
            Objects.requireNonNull(unixSocket, "unixSocket");
            unixSocketMode = Set.copyOf(unixSocketMode);
            Objects.requireNonNull(token, "token");
            Objects.requireNonNull(readToken, "readToken");
            Objects.requireNonNull(tls, "tls");
        }
    }

    /**
     * DESIGN §9 source-side bounds; {@code sourceSessionsMax} is {@code --source-sessions-max}, the sessions this
     * source serves at once (beyond: {@code SESSION_LIMIT}, BND-3).
     */
    public record Inventory(long coalescingWindowMs, long coalescingWaitMaxMs, int frameInputRecordsMax,
                            long frameInputBytesMax, long frameEncodedBytesMax, long frameDecodedBytesMax,
                            long receiveWindowBytes, int snapshotPageRecordsMax, long snapshotPageBytesMax,
                            long journalRetentionBytesMax, int journalRetentionRecordsMax, long ackPendingProgressMs,
                            long idleLivenessMs, int sourceSessionsMax) {}

    /** DESIGN §9 requester-side bounds. */
    public record Index(long freshnessBudgetMs, long indexBudgetBytes, int peerSessionsMax) {}

    /** DESIGN §3 lease timing (MEM-6, MEM-8). */
    public record Lease(long ttlMs, long fenceSafetyMarginMs, long renewalIntervalMs, long etcdCallTimeoutMs) {}

    /**
     * Self-healing of a fenced incarnation (issue 17 item 5; INV-7: a heal is a new incarnation).
     *
     * @param enabled false with --self-heal-disabled
     * @param backoffMinMs delay before the first attempt after a fence
     * @param backoffMaxMs cap of the (jittered, doubling) delay between attempts
     * @param attemptsMax attempts per fence, 0 for no limit
     */
    public record Heal(boolean enabled, long backoffMinMs, long backoffMaxMs, int attemptsMax) {
        /** The pacing of heal attempts: doubling, equal jitter (peers fenced together do not retry together). */
        public orbitkv.membership.RetryBackoff backoff() {
            return new orbitkv.membership.RetryBackoff(backoffMinMs, backoffMaxMs, orbitkv.membership.RetryBackoff.Jitter.EQUAL);
        }
    }

    /**
     * DESIGN §8 transfer settings (docs/transfer.md): the data listener, the default READ backend, the source's
     * pin bounds, grant expiry and egress cap, the requester's receive window.
     *
     * @param dataPort the data listener's port on the peer listener's host (0: any)
     * @param dataAdvertise the endpoint named in grants instead of the bound one, or empty
     * @param backend the default READ backend policy of peer restores
     */
    public record Transfer(int dataPort, Optional<ListenAddress> dataAdvertise, BackendPolicy backend,
                           int pinsPerRequesterMax, long pinnedBytesPerRequesterMax, int pinsTotalMax,
                           long pinnedBytesTotalMax, long grantExpiryMs, long egressInFlightBytesMax,
                           long receiveInFlightBytesMax, int readsPerConnectionMax, int dataConnectionsMax,
                           int dataConnectionsPerAddressMax, long dataHeaderTimeoutMs, long dataIdleTimeoutMs,
                           int dataReadsQueuedPerConnectionMax, int restoreRouteReadsInFlightMax) {
        public Transfer {
            Objects.requireNonNull(dataAdvertise, "dataAdvertise");
            Objects.requireNonNull(backend, "backend");
        }
    }

    /** The option values of {@code --transfer-backend} and the restore field {@code transfer_backend}. */
    public static BackendPolicy backendPolicy(String text) {
        return switch (text) {
            case "shared-memory-preferred" -> BackendPolicy.SHARED_MEMORY_PREFERRED;
            case "tcp" -> BackendPolicy.TCP_ONLY;
            default -> null;
        };
    }

    /**
     * The recovery planner's settings: the four {@code --route-*} options, the rest the planner's defaults
     * (SHADOW selection: the fixed plan executes, the cost-driven choice is traced).
     */
    public RoutePolicy routePolicy() {
        return routePolicy(route);
    }

    private static RoutePolicy routePolicy(Route r) {
        return RoutePolicy.fromManagerOptions(r.alternativesPerBoundaryMax(), r.alternativesPerBatchMax(),
                r.observationsMin(), r.replansMax()).withSelectionMode(r.selection());
    }

    private static SelectionMode selection(String text) {
        SelectionMode m = switch (text) {
            case "fixed" -> SelectionMode.FIXED;
            case "shadow" -> SelectionMode.SHADOW;
            case "cost-driven" -> SelectionMode.COST_DRIVEN;
            default -> null;
        };
        requireRelation(m != null, "--route-selection must be fixed, shadow or cost-driven, got '" + text + "'");
        return m;
    }

    /** DESIGN §9 route search bounds. */
    public record Route(int alternativesPerBoundaryMax, int alternativesPerBatchMax, int observationsMin,
                        int replansMax, SelectionMode selection, Optional<Path> traceDir, int traceSampleEvery) {
        public Route {
            Objects.requireNonNull(selection, "selection");
            Objects.requireNonNull(traceDir, "traceDir");
        }

        /** The search and replan bounds with the default selection (shadow) and no trace file. */
        public Route(int alternativesPerBoundaryMax, int alternativesPerBatchMax, int observationsMin, int replansMax) {
            this(alternativesPerBoundaryMax, alternativesPerBatchMax, observationsMin, replansMax, SelectionMode.SHADOW,
                    Optional.empty(), 64);
        }
    }

    /** The sampled route-trace file of {@code --route-trace-dir} (off without it). */
    public TraceSampling routeTraceSampling() {
        return route.traceDir().map(d -> TraceSampling.every(route.traceSampleEvery()).withDirectory(d))
                .orElse(TraceSampling.off());
    }

    public ManagerConfig {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(etcd, "etcd");
        Objects.requireNonNull(peerListen, "peerListen");
        Objects.requireNonNull(httpListen, "httpListen");
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(tiers, "tiers");
        Objects.requireNonNull(http, "http");
        Objects.requireNonNull(inventory, "inventory");
        Objects.requireNonNull(index, "index");
        Objects.requireNonNull(route, "route");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(peerTls, "peerTls");
        Objects.requireNonNull(heal, "heal");
        requireRelation(heal.backoffMinMs() <= heal.backoffMaxMs(), "--heal-backoff-min-ms (" + heal.backoffMinMs()
                + ") must not exceed --heal-backoff-max-ms (" + heal.backoffMaxMs() + ")");
        Objects.requireNonNull(transfer, "transfer");
        validate(cluster, etcd, peerListen, httpListen, standalone, logLevel, tiers, http, inventory, index, route, lease);
        validateTransfer(tiers, transfer);
        consumersAccept(inventory, index, lease, tiers, transfer, route);
    }

    /**
     * Parses and validates {@code values} (defaults fill what is not given): the one validation pass.
     *
     * @throws ConfigException naming the option(s) at fault
     */
    public static ManagerConfig from(RawValues v) {
        boolean standalone = v.flag(STANDALONE);
        requireRelation(!(standalone && v.given(ETCD)),
                "--standalone and --etcd cannot be combined: a standalone Manager runs without etcd");
        requireRelation(standalone || v.given(ETCD), "--etcd is required unless --standalone is given");
        requireRelation(standalone || v.given(CLUSTER), "--cluster is required unless --standalone is given");
        requireRelation(standalone || v.given(NODE_ID), "--node-id is required unless --standalone is given");
        for (Setting tls : List.of(ETCD_CA_FILE, ETCD_CERT_FILE, ETCD_KEY_FILE)) {
            requireRelation(!(standalone && v.given(tls)), "--standalone and " + tls.flag()
                    + " cannot be combined: a standalone Manager runs without etcd");
        }
        for (Setting tls : List.of(PEER_TLS_CERT_FILE, PEER_TLS_KEY_FILE, PEER_TLS_CA_FILE)) {
            requireRelation(!(standalone && v.given(tls)), "--standalone and " + tls.flag()
                    + " cannot be combined: a standalone Manager has no peer listener");
        }
        boolean emptyScope = v.flag(METADATA_EMPTY_SCOPE);
        requireRelation(!(emptyScope && v.given(METADATA_NAMESPACE)),
                "--metadata-empty-scope and --metadata-namespace cannot be combined: an empty scope subscribes to no namespace");
        requireRelation(!v.given(SSD) || v.given(SSD_DIR), "--ssd requires --ssd-dir");
        requireRelation(!v.given(SSD_DIR) || v.given(SSD), "--ssd-dir requires --ssd (the SSD tier size)");

        String cluster = v.text(CLUSTER);
        NodeId nodeId = parse(NODE_ID, () -> new NodeId(v.given(NODE_ID) ? v.text(NODE_ID) : STANDALONE_NODE_ID));
        if (cluster != null) {
            parse(CLUSTER, () -> new ClusterIdentity(cluster, new java.util.UUID(0, 0))); // the name rule only
        }
        boolean hasSsd = v.given(SSD_DIR);
        Tiers tiers = new Tiers(v.size(DRAM, 64), Path.of(v.text(DRAM_DIR)), v.count(DRAM_PINS_MAX),
                hasSsd ? Path.of(v.text(SSD_DIR)) : null, hasSsd ? v.size(SSD, 1) : 0, v.count(SSD_PINS_MAX),
                v.count(SSD_QUEUE_WRITES_MAX), v.size(SSD_QUEUE_BYTES_MAX, 1), v.size(BLOCK_BYTES_MAX, 1),
                v.size(DRAM_PINNED_BYTES_MAX, 1), v.size(SSD_PINNED_BYTES_MAX, 1), v.size(RESTORE_BYTES_IN_FLIGHT_MAX, 1));
        DataDirectory.require(DRAM_DIR, tiers.dramDir()); // issue 33 item 3: no directory others may write into
        if (hasSsd) {
            DataDirectory.require(SSD_DIR, tiers.ssdDir());
        }
        Http http = new Http(v.size(SAVE_BODY_BYTES_MAX, 1), v.size(JSON_BODY_BYTES_MAX, 1024),
                v.count(HTTP_REQUESTS_IN_FLIGHT_MAX), v.ms(SHUTDOWN_DRAIN_MS, 0, 600_000),
                v.ms(AWAIT_TIMEOUT_MS_MAX, 1, AWAIT_TIMEOUT_MS_CAP), v.count(AWAIT_WAITERS_MAX),
                v.count(HTTP_PROBES_IN_FLIGHT_MAX), v.size(HTTP_BODY_BYTES_IN_FLIGHT_MAX, 1),
                v.ms(HTTP_HEADER_TIMEOUT_MS, 1, 3_600_000), v.ms(HTTP_BODY_PROGRESS_MS, 1, 3_600_000),
                v.size(HTTP_BODY_PROGRESS_BYTES_MIN, 1), v.ms(HTTP_IDLE_TIMEOUT_MS, 1, 86_400_000),
                v.ms(HTTP_LINGER_MS, 0, 600_000), v.size(HTTP_LINGER_BYTES_MAX, 0), v.count(HTTP_PIPELINED_REQUESTS_MAX),
                v.given(HTTP_TOKEN_FILE) ? Optional.of(BearerToken.read(HTTP_TOKEN_FILE, Path.of(v.text(HTTP_TOKEN_FILE))))
                        : Optional.empty(),
                v.given(HTTP_READ_TOKEN_FILE)
                        ? Optional.of(BearerToken.read(HTTP_READ_TOKEN_FILE, Path.of(v.text(HTTP_READ_TOKEN_FILE))))
                        : Optional.empty(),
                v.size(HTTP_BODY_BYTES_IN_FLIGHT_PER_CLIENT_MAX, 1), httpTls(v), unixSocket(v), unixSocketMode(v));
        Inventory inventory = new Inventory(v.ms(COALESCING_WINDOW_MS, 0, 1000), v.ms(COALESCING_WAIT_MAX_MS, 0, 1000),
                v.count(FRAME_INPUT_RECORDS_MAX), v.size(FRAME_INPUT_BYTES_MAX, 1), v.size(FRAME_ENCODED_BYTES_MAX, 1024),
                v.size(FRAME_DECODED_BYTES_MAX, 1024), v.size(RECEIVE_WINDOW_BYTES, 1024),
                v.count(SNAPSHOT_PAGE_RECORDS_MAX), v.size(SNAPSHOT_PAGE_BYTES_MAX, 1),
                v.size(JOURNAL_RETENTION_BYTES_MAX, 1), v.count(JOURNAL_RETENTION_RECORDS_MAX),
                v.ms(ACK_PENDING_PROGRESS_MS, 1, 60_000), v.ms(IDLE_LIVENESS_MS, 1, 60_000),
                v.count(SOURCE_SESSIONS_MAX, 1, SOURCE_SESSIONS_MAX_LIMIT));
        Index index = new Index(v.ms(FRESHNESS_BUDGET_MS, 1, 3_600_000), v.size(INDEX_BUDGET_BYTES, 1),
                v.count(PEER_SESSIONS_MAX));
        // the planner's own limits (RoutePolicy): search bounds, observations within one class window, two replans
        Route route = new Route(v.count(ROUTE_ALTERNATIVES_PER_BOUNDARY_MAX, 1, RoutePolicy.ALTERNATIVES_PER_BOUNDARY_LIMIT),
                v.count(ROUTE_ALTERNATIVES_PER_BATCH_MAX, 1, RoutePolicy.ALTERNATIVES_PER_BATCH_LIMIT),
                v.count(ROUTE_OBSERVATIONS_MIN, 1, RoutePolicy.OBSERVATIONS_PER_CLASS_MAX_DEFAULT),
                v.count(ROUTE_REPLANS_MAX, 0, RoutePolicy.REPLANS_MAX_DEFAULT), selection(v.text(ROUTE_SELECTION)),
                Optional.ofNullable(path(v, ROUTE_TRACE_DIR)), v.count(ROUTE_TRACE_SAMPLE_EVERY, 1, 1_000_000));
        Optional<EtcdEndpoints> etcd = standalone ? Optional.empty() : Optional.of(EtcdOptions.parse(v.text(ETCD),
                path(v, ETCD_CA_FILE), path(v, ETCD_CERT_FILE), path(v, ETCD_KEY_FILE)));
        return new ManagerConfig(cluster, nodeId, etcd,
                ListenAddress.parse(PEER_LISTEN, v.text(PEER_LISTEN)), ListenAddress.parse(HTTP_LISTEN, v.text(HTTP_LISTEN)),
                standalone, scope(emptyScope, v.list(METADATA_NAMESPACE)), v.text(LOG_LEVEL).toUpperCase(Locale.ROOT),
                tiers, http, inventory, index, route, lease(v), peerTls(v, nodeId), transfer(v), heal(v));
    }

    private static Heal heal(RawValues v) {
        return new Heal(!v.flag(SELF_HEAL_DISABLED), v.ms(HEAL_BACKOFF_MIN_MS, 1, 3_600_000),
                v.ms(HEAL_BACKOFF_MAX_MS, 1, 3_600_000), v.count(HEAL_ATTEMPTS_MAX, 0, 1_000_000));
    }

    private static Transfer transfer(RawValues v) {
        String backend = v.text(TRANSFER_BACKEND);
        BackendPolicy policy = backendPolicy(backend);
        requireRelation(policy != null, "--transfer-backend must be shared-memory-preferred or tcp, got '" + backend + "'");
        Optional<ListenAddress> advertise = v.given(TRANSFER_DATA_ADVERTISE)
                ? Optional.of(ListenAddress.parse(TRANSFER_DATA_ADVERTISE, v.text(TRANSFER_DATA_ADVERTISE)))
                : Optional.empty();
        advertise.ifPresent(a -> requireRelation(a.port() != 0, "--transfer-data-advertise must name a port, got "
                + a + ": a grant names where to connect"));
        return new Transfer(v.count(TRANSFER_DATA_PORT, 0, 65535), advertise, policy,
                v.count(TRANSFER_PINS_PER_REQUESTER_MAX), v.size(TRANSFER_PINNED_BYTES_PER_REQUESTER_MAX, 1),
                v.count(TRANSFER_PINS_TOTAL_MAX), v.size(TRANSFER_PINNED_BYTES_TOTAL_MAX, 1),
                v.ms(TRANSFER_GRANT_EXPIRY_MS, 1, 3_600_000), v.size(TRANSFER_EGRESS_IN_FLIGHT_BYTES_MAX, 1),
                v.size(TRANSFER_RECEIVE_IN_FLIGHT_BYTES_MAX, 1),
                v.count(TRANSFER_READS_PER_CONNECTION_MAX, 1, TransferConfig.DEFAULT_READS_IN_FLIGHT_MAX),
                v.count(TRANSFER_DATA_CONNECTIONS_MAX, 1, 1_000_000), v.count(TRANSFER_DATA_CONNECTIONS_PER_ADDRESS_MAX,
                        TransferConfig.DEFAULT_CONNECTIONS_PER_SOURCE_MAX, 1_000_000),
                v.ms(TRANSFER_DATA_HEADER_TIMEOUT_MS, 1, 3_600_000), v.ms(TRANSFER_DATA_IDLE_TIMEOUT_MS, 1, 86_400_000),
                v.count(TRANSFER_DATA_READS_QUEUED_PER_CONNECTION_MAX, 1, 1_000_000),
                v.count(RESTORE_ROUTE_READS_IN_FLIGHT_MAX, 1, TransferConfig.DEFAULT_READS_IN_FLIGHT_MAX));
    }

    /**
     * The transfer settings in orbitkv.transfer's terms: the options above, {@code --block-bytes-max} as the
     * block bound of both sides, the prefetch share capped by the total pinned bytes, the rest transfer's
     * defaults.
     */
    public TransferConfig transferConfig() {
        return transferConfig(tiers, transfer);
    }

    private static TransferConfig transferConfig(Tiers t, Transfer x) {
        TransferConfig d = TransferConfig.defaults();
        // the block bound first: every other bound is checked against it
        return d.withWindows(t.blockBytesMax(), Math.max(d.sourceEgressInFlightBytesMax(), t.blockBytesMax()),
                        Math.max(d.receiveInFlightBytesMax(), t.blockBytesMax()), d.readsInFlightMax(),
                        d.connectionsPerSourceMax())
                .withPins(x.pinsPerRequesterMax(), x.pinnedBytesPerRequesterMax(), x.pinsTotalMax(),
                        x.pinnedBytesTotalMax(), Math.min(d.prefetchPinnedBytesTotalMax(), x.pinnedBytesTotalMax()))
                .withWindows(t.blockBytesMax(), x.egressInFlightBytesMax(), x.receiveInFlightBytesMax(),
                        d.readsInFlightMax(), d.connectionsPerSourceMax())
                .withGrantTiming(x.grantExpiryMs(), Math.min(d.expirySweepIntervalMs(), x.grantExpiryMs()),
                        d.grantSafetyMarginMs())
                .withReadsPerConnection(x.readsPerConnectionMax())
                .withDataListener(x.dataConnectionsMax(), x.dataConnectionsPerAddressMax(), x.dataHeaderTimeoutMs(),
                        x.dataIdleTimeoutMs(), x.dataReadsQueuedPerConnectionMax());
    }

    /** Relations of the transfer settings (BND-6), in the option names as typed. */
    private static void validateTransfer(Tiers t, Transfer x) {
        requireRelation(t.blockBytesMax() <= Integer.MAX_VALUE, "--block-bytes-max (" + t.blockBytesMax()
                + ") must not exceed " + Integer.MAX_VALUE + " bytes: a peer READ fills one buffer per block");
        requireRelation(t.blockBytesMax() <= x.pinnedBytesPerRequesterMax(), "--transfer-pinned-bytes-per-requester-max ("
                + x.pinnedBytesPerRequesterMax() + ") must be at least --block-bytes-max (" + t.blockBytesMax()
                + "): one block must be grantable");
        requireRelation(x.pinsPerRequesterMax() <= x.pinsTotalMax(), "--transfer-pins-total-max (" + x.pinsTotalMax()
                + ") must be at least --transfer-pins-per-requester-max (" + x.pinsPerRequesterMax() + ")");
        requireRelation(x.pinnedBytesPerRequesterMax() <= x.pinnedBytesTotalMax(), "--transfer-pinned-bytes-total-max ("
                + x.pinnedBytesTotalMax() + ") must be at least --transfer-pinned-bytes-per-requester-max ("
                + x.pinnedBytesPerRequesterMax() + ")");
        requireRelation(x.grantExpiryMs() > TransferConfig.DEFAULT_GRANT_SAFETY_MARGIN_MS, "--transfer-grant-expiry-ms ("
                + x.grantExpiryMs() + ") must be more than the requester's grant safety margin ("
                + TransferConfig.DEFAULT_GRANT_SAFETY_MARGIN_MS + " ms): no READ could start before a grant ends");
        requireRelation(t.blockBytesMax() <= x.egressInFlightBytesMax(), "--transfer-egress-in-flight-bytes-max ("
                + x.egressInFlightBytesMax() + ") must be at least --block-bytes-max (" + t.blockBytesMax()
                + "): one block must fit the egress window");
        requireRelation(t.blockBytesMax() <= x.receiveInFlightBytesMax(), "--transfer-receive-in-flight-bytes-max ("
                + x.receiveInFlightBytesMax() + ") must be at least --block-bytes-max (" + t.blockBytesMax()
                + "): one block must fit the receive window");
        // issue 33: data listener bounds
        requireRelation(x.dataConnectionsPerAddressMax() <= x.dataConnectionsMax(),
                "--transfer-data-connections-per-address-max (" + x.dataConnectionsPerAddressMax()
                + ") must not exceed --transfer-data-connections-max (" + x.dataConnectionsMax() + ")");
        requireRelation(x.readsPerConnectionMax() <= x.dataReadsQueuedPerConnectionMax(),
                "--transfer-data-reads-queued-per-connection-max (" + x.dataReadsQueuedPerConnectionMax()
                + ") must be at least --transfer-reads-per-connection-max (" + x.readsPerConnectionMax()
                + "): a requester's whole pipeline must be read without pausing");
        // issue 34: restore
        long routeReadsMax = (long) x.readsPerConnectionMax() * TransferConfig.DEFAULT_CONNECTIONS_PER_SOURCE_MAX;
        requireRelation(x.restoreRouteReadsInFlightMax() <= routeReadsMax, "--restore-route-reads-in-flight-max ("
                + x.restoreRouteReadsInFlightMax() + ") must not exceed --transfer-reads-per-connection-max ("
                + x.readsPerConnectionMax() + ") times the " + TransferConfig.DEFAULT_CONNECTIONS_PER_SOURCE_MAX
                + " data connections to one source: a route's READs beyond them would be refused (connections)");
    }

    private static Path path(RawValues v, Setting s) {
        return v.given(s) ? Path.of(v.text(s)) : null;
    }

    /**
     * The HTTP listener's TLS (issue 33): certificate and key together or neither; a client CA only with them
     * (BND-6). The files are read and checked here.
     */
    private static Optional<HttpTls> httpTls(RawValues v) {
        boolean cert = v.given(HTTP_TLS_CERT_FILE);
        boolean key = v.given(HTTP_TLS_KEY_FILE);
        requireRelation(cert == key, "--http-tls-cert-file and --http-tls-key-file go together: "
                + (cert ? "--http-tls-key-file" : "--http-tls-cert-file") + " missing");
        requireRelation(cert || !v.given(HTTP_TLS_CLIENT_CA_FILE), "--http-tls-client-ca-file requires --http-tls-cert-file"
                + " and --http-tls-key-file: client certificates exist only over TLS");
        if (!cert) {
            return Optional.empty();
        }
        return Optional.of(HttpTls.load(path(v, HTTP_TLS_CERT_FILE), path(v, HTTP_TLS_KEY_FILE),
                Optional.ofNullable(path(v, HTTP_TLS_CLIENT_CA_FILE))));
    }

    /** A Unix socket address holds 107 path bytes; the socket is first bound in a fresh directory beside its path. */
    private static final int UNIX_SOCKET_PATH_BYTES_MAX = 107;
    private static final int UNIX_SOCKET_STAGING_BYTES = 28;

    /**
     * {@code --http-unix-socket} (issue 33): an existing directory that others cannot write (they could replace
     * the socket), a path short enough for a socket address, staging included.
     */
    private static Optional<Path> unixSocket(RawValues v) {
        if (!v.given(HTTP_UNIX_SOCKET)) {
            return Optional.empty();
        }
        String option = HTTP_UNIX_SOCKET.flag() + " " + v.text(HTTP_UNIX_SOCKET);
        Path path = Path.of(v.text(HTTP_UNIX_SOCKET)).toAbsolutePath().normalize();
        Path dir = path.getParent();
        requireRelation(dir != null && java.nio.file.Files.isDirectory(dir), option + ": its directory does not exist");
        int dirBytes = dir.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        requireRelation(path.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= UNIX_SOCKET_PATH_BYTES_MAX
                && dirBytes + UNIX_SOCKET_STAGING_BYTES <= UNIX_SOCKET_PATH_BYTES_MAX, option + ": a Unix socket path holds "
                + UNIX_SOCKET_PATH_BYTES_MAX + " bytes; its directory may have at most "
                + (UNIX_SOCKET_PATH_BYTES_MAX - UNIX_SOCKET_STAGING_BYTES) + " (the socket is bound beside it first)");
        try {
            Set<PosixFilePermission> perms = java.nio.file.Files.getPosixFilePermissions(dir);
            requireRelation(!perms.contains(PosixFilePermission.OTHERS_WRITE), option + ": its directory " + dir
                    + " is writable by others (" + java.nio.file.attribute.PosixFilePermissions.toString(perms)
                    + "), who could replace the socket: use a directory of the Manager's user (e.g. /run/orbitkv)");
        } catch (java.io.IOException | UnsupportedOperationException e) {
            throw new ConfigException(option + ": the permissions of its directory cannot be read: " + e);
        }
        return Optional.of(path);
    }

    /** {@code --http-unix-socket-mode}: three octal digits (a leading 0 allowed), nothing for others. */
    private static Set<PosixFilePermission> unixSocketMode(RawValues v) {
        String text = v.text(HTTP_UNIX_SOCKET_MODE);
        requireRelation(text.matches("0?[0-7]{3}"), "--http-unix-socket-mode must be octal permissions like 0600 or 0660, got '"
                + text + "'");
        int mode = Integer.parseInt(text, 8);
        requireRelation((mode & 07) == 0, "--http-unix-socket-mode " + text + " grants others access to the socket:"
                + " the last digit must be 0 (use a group, 0660, for engines of another user)");
        String rwx = "rwxrwxrwx";
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 9; i++) {
            sb.append((mode & (1 << (8 - i))) != 0 ? rwx.charAt(i) : '-');
        }
        return java.nio.file.attribute.PosixFilePermissions.fromString(sb.toString());
    }

    /** All three peer TLS files or none (BND-6); the files are read and checked here. */
    private static Optional<PeerTls> peerTls(RawValues v, NodeId nodeId) {
        List<Setting> files = List.of(PEER_TLS_CERT_FILE, PEER_TLS_KEY_FILE, PEER_TLS_CA_FILE);
        List<String> missing = files.stream().filter(s -> !v.given(s)).map(Setting::flag).toList();
        if (missing.size() == files.size()) {
            return Optional.empty();
        }
        requireRelation(missing.isEmpty(), "--peer-tls-cert-file, --peer-tls-key-file and --peer-tls-ca-file go together: "
                + String.join(" and ", missing) + " missing");
        return Optional.of(PeerTls.load(path(v, PEER_TLS_CERT_FILE), path(v, PEER_TLS_KEY_FILE), path(v, PEER_TLS_CA_FILE),
                nodeId));
    }

    private static Lease lease(RawValues v) {
        return new Lease(v.ms(LEASE_TTL_MS, 2_000, 3_600_000), v.ms(FENCE_SAFETY_MARGIN_MS, 0, 3_600_000),
                v.ms(RENEWAL_INTERVAL_MS, 1, 3_600_000), v.ms(ETCD_CALL_TIMEOUT_MS, 1, 3_600_000));
    }

    /**
     * The lease timing in orbitkv.membership's terms; the settings without an option (retry backoff, member
     * page size) are membership's defaults.
     */
    public MembershipConfig membershipConfig() {
        return membershipConfig(lease);
    }

    private static MembershipConfig membershipConfig(Lease l) {
        MembershipConfig d = MembershipConfig.defaults();
        return new MembershipConfig(l.ttlMs(), l.fenceSafetyMarginMs(), l.renewalIntervalMs(), l.etcdCallTimeoutMs(),
                d.retryBackoffMinMs(), d.retryBackoffMaxMs(), d.memberPageSize());
    }

    /** The peer listener's and channels' gRPC inbound message bound, derived from the session's frame bounds. */
    public int peerInboundMessageBytesMax() {
        SessionConfig s = sessionConfig();
        long bound = Math.max(s.frameEncodedBytesMax(), s.openEncodedBytesMax()) + (long) PEER_MESSAGE_MARGIN_BYTES;
        return (int) Math.min(Integer.MAX_VALUE, bound);
    }

    /** The source inventory settings (DESIGN §9) in orbitkv.inventory's terms. */
    public InventoryConfig inventoryConfig() {
        return inventoryConfig(inventory);
    }

    private static InventoryConfig inventoryConfig(Inventory i) {
        return new InventoryConfig(i.journalRetentionBytesMax(), i.journalRetentionRecordsMax(), i.frameInputRecordsMax(),
                i.frameInputBytesMax(), (int) Math.min(Integer.MAX_VALUE, i.frameEncodedBytesMax()),
                (int) Math.min(Integer.MAX_VALUE, i.frameDecodedBytesMax()), i.snapshotPageRecordsMax(),
                i.snapshotPageBytesMax(),
                i.coalescingWindowMs(), i.coalescingWaitMaxMs(), InventoryConfig.DEFAULT_WAITERS_MAX);
    }

    /**
     * The InventorySession settings (DESIGN §5, §9) of both ends: receive window, frame bounds, ACK cadence,
     * liveness and sessions per requester come from the options; the rest are the session's defaults.
     */
    public SessionConfig sessionConfig() {
        return sessionConfig(inventory, index);
    }

    private static SessionConfig sessionConfig(Inventory i, Index x) {
        SessionConfig d = SessionConfig.defaults();
        return new SessionConfig(i.receiveWindowBytes(), d.windowFramesMax(), d.openEncodedBytesMax(),
                (int) Math.min(Integer.MAX_VALUE, i.frameEncodedBytesMax()),
                (int) Math.min(Integer.MAX_VALUE, i.frameDecodedBytesMax()), i.ackPendingProgressMs(), i.idleLivenessMs(),
                x.peerSessionsMax(), i.sourceSessionsMax(), d.reconnectBackoffMinMs(), d.reconnectBackoffMaxMs(),
                d.snapshotRetryBackoffMinMs(), d.snapshotRetryBackoffMaxMs(), d.replayIntervalsPerRead(),
                d.committedViewsMax());
    }

    /** The GlobalIndex settings (DESIGN §9) in orbitkv.index's terms; lookup bounds are the API's (IDX-9). */
    public IndexConfig indexConfig() {
        return indexConfig(index);
    }

    private static IndexConfig indexConfig(Index index) {
        IndexConfig d = IndexConfig.defaults();
        return new IndexConfig(index.indexBudgetBytes(), index.freshnessBudgetMs(), d.lookupKeysMax(), d.lookupBytesMax(),
                d.replicasPerMediumMax(), d.cleanupBatchRowsMax(), d.diagnosticsPageSizeMax());
    }

    /**
     * Whatever {@link #validate} accepts, the consumers accept: their constructors check the same relations.
     * A refusal here is a relation missing from {@link #validate}, a bug, not an operator error.
     */
    private static void consumersAccept(Inventory i, Index x, Lease l, Tiers t, Transfer tr, Route r) {
        try {
            inventoryConfig(i);
            sessionConfig(i, x).requireCompatible(inventoryConfig(i));
            indexConfig(x);
            membershipConfig(l);
            transferConfig(t, tr);
            routePolicy(r);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("a relation is missing from ManagerConfig.validate: " + e.getMessage(), e);
        }
    }

    /**
     * The one place where relations between settings are checked (BND-6), the consumers' relations
     * included; each message names both options as typed.
     */
    private static void validate(String cluster, Optional<EtcdEndpoints> etcd, ListenAddress peer, ListenAddress httpListen,
                                 boolean standalone, String logLevel, Tiers t, Http h, Inventory i, Index x, Route r,
                                 Lease l) {
        requireRelation(standalone || (cluster != null && etcd.isPresent()),
                "--cluster and --etcd are required unless --standalone is given");
        requireRelation(!standalone || etcd.isEmpty(), "--standalone and --etcd cannot be combined: a standalone Manager runs without etcd");
        requireRelation(LOG_LEVELS.contains(logLevel), "--log-level must be one of ERROR, WARN, INFO, DEBUG, TRACE, got '" + logLevel + "'");
        requireRelation(peer.port() == 0 || !peer.equals(httpListen),
                "--http-listen and --peer-listen must differ, both are " + peer);
        validateTiers(t, h);
        validateHttp(t, h);
        validateInventory(i, x);
        validateLease(l);
        requireRelation(r.alternativesPerBoundaryMax() <= r.alternativesPerBatchMax(), "--route-alternatives-per-boundary-max ("
                + r.alternativesPerBoundaryMax() + ") must not exceed --route-alternatives-per-batch-max ("
                + r.alternativesPerBatchMax() + ")");
    }

    private static void validateTiers(Tiers t, Http h) {
        // issue 35 item 1: the ceiling first, every other relation is stated against the block size
        requireRelation(t.blockBytesMax() <= BLOCK_BYTES_CEILING, "--block-bytes-max (" + t.blockBytesMax()
                + ") must not exceed " + BLOCK_BYTES_CEILING + " bytes (128 MiB): the largest block size tested end to end");
        requireRelation(t.blockBytesMax() <= t.dramBytes(), "--block-bytes-max (" + t.blockBytesMax()
                + ") must not exceed --dram (" + t.dramBytes() + "): every block must fit the DRAM tier");
        requireRelation(t.blockBytesMax() + RECORD_FRAMING_BYTES_MAX <= h.saveBodyBytesMax(), "--save-body-bytes-max ("
                + h.saveBodyBytesMax() + ") must hold one record of --block-bytes-max (" + t.blockBytesMax()
                + ") plus " + RECORD_FRAMING_BYTES_MAX + " framing bytes");
        requireRelation(t.blockBytesMax() + RECORD_FRAMING_BYTES_MAX <= t.restoreBytesInFlightMax(), "--restore-bytes-in-flight-max ("
                + t.restoreBytesInFlightMax() + ") must hold one record of --block-bytes-max (" + t.blockBytesMax()
                + ") plus " + RECORD_FRAMING_BYTES_MAX + " framing bytes");
        requireRelation(t.blockBytesMax() <= t.dramPinnedBytesMax(), "--dram-pinned-bytes-max (" + t.dramPinnedBytesMax()
                + ") must be at least --block-bytes-max (" + t.blockBytesMax() + "): one block must be readable");
        if (t.hasSsd()) {
            requireRelation(t.blockBytesMax() <= t.ssdPinnedBytesMax(), "--ssd-pinned-bytes-max (" + t.ssdPinnedBytesMax()
                    + ") must be at least --block-bytes-max (" + t.blockBytesMax() + "): one block must be readable");
            requireRelation(t.blockBytesMax() <= t.ssdBytes(), "--block-bytes-max (" + t.blockBytesMax()
                    + ") must not exceed --ssd (" + t.ssdBytes() + ")");
            requireRelation(t.blockBytesMax() <= t.ssdQueueBytesMax(), "--ssd-queue-bytes-max (" + t.ssdQueueBytesMax()
                    + ") must be at least --block-bytes-max (" + t.blockBytesMax() + ")");
        }
    }

    private static void validateHttp(Tiers t, Http h) {
        requireRelation(h.saveBodyBytesMax() <= h.bodyBytesInFlightMax(), "--http-body-bytes-in-flight-max ("
                + h.bodyBytesInFlightMax() + ") must be at least --save-body-bytes-max (" + h.saveBodyBytesMax()
                + "): a save of the largest allowed body could never be admitted");
        requireRelation(h.jsonBodyBytesMax() <= h.bodyBytesInFlightMax(), "--http-body-bytes-in-flight-max ("
                + h.bodyBytesInFlightMax() + ") must be at least --json-body-bytes-max (" + h.jsonBodyBytesMax() + ")");
        // issue 33: a client's share (capped at the whole) must admit the largest save
        requireRelation(h.saveBodyBytesMax() <= h.bodyBytesInFlightPerClientMax(), "--http-body-bytes-in-flight-per-client-max ("
                + h.bodyBytesInFlightPerClientMax() + ") must be at least --save-body-bytes-max (" + h.saveBodyBytesMax()
                + "): a save of the largest allowed body could never be admitted");
        // issue 33: a read token without a write token would protect reads while anyone may save and evict
        requireRelation(h.readToken().isEmpty() || h.token().isPresent(), "--http-read-token-file requires --http-token-file:"
                + " with a read token but no write token anyone could save and evict while reads need a token");
        requireRelation(h.readToken().isEmpty() || !h.readToken().get().sameSecret(h.token().get()),
                "--http-read-token-file and --http-token-file must hold different tokens: a reader would be able to write");
    }

    private static void validateInventory(Inventory i, Index x) {
        requireRelation(i.coalescingWindowMs() <= i.coalescingWaitMaxMs(), "--coalescing-window-ms ("
                + i.coalescingWindowMs() + ") must not exceed --coalescing-wait-max-ms (" + i.coalescingWaitMaxMs() + ")");
        requireRelation(i.frameEncodedBytesMax() >= SessionConfig.FRAME_ENCODED_BYTES_MIN, "--frame-encoded-bytes-max ("
                + i.frameEncodedBytesMax() + ") must be at least " + SessionConfig.FRAME_ENCODED_BYTES_MIN
                + " bytes: a session must carry one largest record and its control frames");
        requireRelation(i.frameEncodedBytesMax() <= i.frameDecodedBytesMax(), "--frame-encoded-bytes-max ("
                + i.frameEncodedBytesMax() + ") must not exceed --frame-decoded-bytes-max (" + i.frameDecodedBytesMax() + ")");
        requireRelation(i.snapshotPageBytesMax() <= i.frameEncodedBytesMax() - InventoryConfig.PAGE_FRAME_OVERHEAD_BYTES,
                "--snapshot-page-bytes-max (" + i.snapshotPageBytesMax() + ") must not exceed --frame-encoded-bytes-max ("
                + i.frameEncodedBytesMax() + ") minus " + InventoryConfig.PAGE_FRAME_OVERHEAD_BYTES
                + " frame overhead bytes: a page is sent as one frame");
        requireRelation(i.frameDecodedBytesMax() <= Integer.MAX_VALUE, "--frame-decoded-bytes-max ("
                + i.frameDecodedBytesMax() + ") must not exceed " + Integer.MAX_VALUE + " bytes");
        requireRelation(i.frameEncodedBytesMax() <= i.receiveWindowBytes(), "--receive-window-bytes ("
                + i.receiveWindowBytes() + ") must be at least --frame-encoded-bytes-max (" + i.frameEncodedBytesMax()
                + "): one frame must fit the credit window");
        requireRelation(i.frameInputBytesMax() >= InventoryConfig.JOURNAL_ENTRY_BYTES_MAX, "--frame-input-bytes-max ("
                + i.frameInputBytesMax() + ") must be at least " + InventoryConfig.JOURNAL_ENTRY_BYTES_MAX
                + " bytes: one largest journal entry");
        requireRelation(i.frameInputBytesMax() <= i.journalRetentionBytesMax(), "--journal-retention-bytes-max ("
                + i.journalRetentionBytesMax() + ") must be at least --frame-input-bytes-max (" + i.frameInputBytesMax() + ")");
        requireRelation(i.ackPendingProgressMs() <= i.idleLivenessMs(), "--idle-liveness-ms (" + i.idleLivenessMs()
                + ") must be at least --ack-pending-progress-ms (" + i.ackPendingProgressMs() + ")");
        requireRelation(i.idleLivenessMs() < x.freshnessBudgetMs(), "--idle-liveness-ms (" + i.idleLivenessMs()
                + ") must be less than --freshness-budget-ms (" + x.freshnessBudgetMs()
                + "): idle owners would turn stale between liveness frames");
    }

    private static void validateLease(Lease l) {
        requireRelation(l.ttlMs() % 1000 == 0, "--lease-ttl-ms must be a whole number of seconds in 2000..3600000, got "
                + l.ttlMs());
        requireRelation(l.fenceSafetyMarginMs() < l.ttlMs(), "--fence-safety-margin-ms (" + l.fenceSafetyMarginMs()
                + ") must be less than --lease-ttl-ms (" + l.ttlMs() + ")");
        long window = l.ttlMs() - l.fenceSafetyMarginMs();
        requireRelation(l.renewalIntervalMs() < window, "--renewal-interval-ms (" + l.renewalIntervalMs()
                + ") must be less than --lease-ttl-ms minus --fence-safety-margin-ms (" + window
                + "): a renewal must be confirmed before the local fence falls");
        requireRelation(l.etcdCallTimeoutMs() < window, "--etcd-call-timeout-ms (" + l.etcdCallTimeoutMs()
                + ") must be less than --lease-ttl-ms minus --fence-safety-margin-ms (" + window
                + "): an etcd call must time out before the local fence falls");
    }

    private static Scope scope(boolean empty, List<String> names) {
        if (empty) {
            return Scope.none();
        }
        if (names.isEmpty()) {
            return Scope.all();
        }
        requireRelation(names.size() <= Scope.MAX_NAMESPACES, "--metadata-namespace is given " + names.size()
                + " times; a scope holds at most " + Scope.MAX_NAMESPACES + " namespaces");
        List<Namespace> namespaces = new ArrayList<>();
        for (String n : names) {
            int bytes = n.getBytes(StandardCharsets.UTF_8).length;
            requireRelation(bytes >= 1 && bytes <= Namespace.MAX_BYTES, "--metadata-namespace must be 1.."
                    + Namespace.MAX_BYTES + " UTF-8 bytes, got " + bytes + " for '" + n + "'");
            namespaces.add(Namespace.utf8(n));
        }
        Scope scope = Scope.of(namespaces);
        int encoded = scope.canonicalEncoding().length;
        requireRelation(encoded <= 64 * 1024, "--metadata-namespace list encodes to " + encoded
                + " bytes; a scope is at most 65536 bytes");
        return scope;
    }

    private static <T> T parse(Setting s, java.util.function.Supplier<T> parser) {
        try {
            return parser.get();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(s.flag() + ": " + e.getMessage());
        }
    }

    private static void requireRelation(boolean ok, String message) {
        if (!ok) {
            throw new ConfigException(message);
        }
    }
}
