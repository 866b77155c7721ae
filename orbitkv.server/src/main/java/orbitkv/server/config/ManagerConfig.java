package orbitkv.server.config;

import static orbitkv.server.config.Setting.*;
import static orbitkv.server.config.SettingRelations.require;

import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InventoryConfig;
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
import orbitkv.transfer.TlsProvider;
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
 * @param admission the node-local S6 admission window and pacer per NIC and direction (issue 39)
 * @param speculation retention and declared-demand prefetch (issue 40, ROUTE-12, ROUTE-13)
 */
public record ManagerConfig(String cluster, NodeId nodeId, Optional<EtcdEndpoints> etcd, ListenAddress peerListen,
                            ListenAddress httpListen, boolean standalone, Scope scope, String logLevel,
                            Tiers tiers, Http http, Inventory inventory, Index index, Route route,
                            Lease lease, Optional<PeerTls> peerTls, Transfer transfer, Heal heal,
                            AdmissionOptions admission, SpeculationOptions speculation) {
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
     * @param writeStallMs an answer whose pending bytes make no progress for this long closes its connection
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
                       long writeStallMs, long lingerMs, long lingerBytesMax, int pipelinedRequestsMax, Optional<BearerToken> token,
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
                            long idleLivenessMs, int sourceSessionsMax, int sourceSendStepsMax, boolean sourceSendPriority,
                            Set<NodeId> sourcePriorityRequesters, int coalescingImmediateReadsMax) {}

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
                           int dataReadsQueuedPerConnectionMax, TlsProvider tlsProvider,
                           int restoreRouteReadsInFlightMax, boolean dataChannelAuthorize) {
        public Transfer {
            Objects.requireNonNull(dataAdvertise, "dataAdvertise");
            Objects.requireNonNull(backend, "backend");
            Objects.requireNonNull(tlsProvider, "tlsProvider");
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
        return LibraryConfigs.routePolicy(route);
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
        require(heal.backoffMinMs() <= heal.backoffMaxMs(), "--heal-backoff-min-ms (" + heal.backoffMinMs()
                + ") must not exceed --heal-backoff-max-ms (" + heal.backoffMaxMs() + ")");
        Objects.requireNonNull(transfer, "transfer");
        validate(cluster, etcd, peerListen, httpListen, standalone, logLevel, tiers, http, inventory, index, route, lease);
        SettingRelations.transfer(tiers, transfer);
        Objects.requireNonNull(admission, "admission");
        SettingRelations.admission(tiers, transfer, admission); // issue 39
        Objects.requireNonNull(speculation, "speculation"); // issue 40
        LibraryConfigs.consumersAccept(inventory, index, lease, tiers, transfer, route);
    }

    /**
     * Parses and validates {@code values} (defaults fill what is not given): the one validation pass.
     *
     * @throws ConfigException naming the option(s) at fault
     */
    public static ManagerConfig from(RawValues v) {
        boolean standalone = v.flag(STANDALONE);
        require(!(standalone && v.given(ETCD)),
                "--standalone and --etcd cannot be combined: a standalone Manager runs without etcd");
        require(standalone || v.given(ETCD), "--etcd is required unless --standalone is given");
        require(standalone || v.given(CLUSTER), "--cluster is required unless --standalone is given");
        require(standalone || v.given(NODE_ID), "--node-id is required unless --standalone is given");
        for (Setting tls : List.of(ETCD_CA_FILE, ETCD_CERT_FILE, ETCD_KEY_FILE)) {
            require(!(standalone && v.given(tls)), "--standalone and " + tls.flag()
                    + " cannot be combined: a standalone Manager runs without etcd");
        }
        for (Setting tls : List.of(PEER_TLS_CERT_FILE, PEER_TLS_KEY_FILE, PEER_TLS_CA_FILE)) {
            require(!(standalone && v.given(tls)), "--standalone and " + tls.flag()
                    + " cannot be combined: a standalone Manager has no peer listener");
        }
        boolean emptyScope = v.flag(METADATA_EMPTY_SCOPE);
        require(!(emptyScope && v.given(METADATA_NAMESPACE)),
                "--metadata-empty-scope and --metadata-namespace cannot be combined: an empty scope subscribes to no namespace");
        require(!v.given(SSD) || v.given(SSD_DIR), "--ssd requires --ssd-dir");
        require(!v.given(SSD_DIR) || v.given(SSD), "--ssd-dir requires --ssd (the SSD tier size)");

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
                v.ms(HTTP_WRITE_STALL_MS, 1, 3_600_000),
                v.ms(HTTP_LINGER_MS, 0, 600_000), v.size(HTTP_LINGER_BYTES_MAX, 0), v.count(HTTP_PIPELINED_REQUESTS_MAX),
                v.given(HTTP_TOKEN_FILE) ? Optional.of(BearerToken.read(HTTP_TOKEN_FILE, Path.of(v.text(HTTP_TOKEN_FILE))))
                        : Optional.empty(),
                v.given(HTTP_READ_TOKEN_FILE)
                        ? Optional.of(BearerToken.read(HTTP_READ_TOKEN_FILE, Path.of(v.text(HTTP_READ_TOKEN_FILE))))
                        : Optional.empty(),
                v.size(HTTP_BODY_BYTES_IN_FLIGHT_PER_CLIENT_MAX, 1), ListenerOptions.httpTls(v), ListenerOptions.unixSocket(v), ListenerOptions.unixSocketMode(v));
        Inventory inventory = inventory(v);
        Index index = new Index(v.ms(FRESHNESS_BUDGET_MS, 1, 3_600_000), v.size(INDEX_BUDGET_BYTES, 1),
                v.count(PEER_SESSIONS_MAX));
        // the planner's own limits (RoutePolicy): search bounds, observations within one class window, two replans
        Route route = new Route(v.count(ROUTE_ALTERNATIVES_PER_BOUNDARY_MAX, 1, RoutePolicy.ALTERNATIVES_PER_BOUNDARY_LIMIT),
                v.count(ROUTE_ALTERNATIVES_PER_BATCH_MAX, 1, RoutePolicy.ALTERNATIVES_PER_BATCH_LIMIT),
                v.count(ROUTE_OBSERVATIONS_MIN, 1, RoutePolicy.OBSERVATIONS_PER_CLASS_MAX_DEFAULT),
                v.count(ROUTE_REPLANS_MAX, 0, RoutePolicy.REPLANS_MAX_DEFAULT), LibraryConfigs.selection(v.text(ROUTE_SELECTION)),
                Optional.ofNullable(ListenerOptions.path(v, ROUTE_TRACE_DIR)), v.count(ROUTE_TRACE_SAMPLE_EVERY, 1, 1_000_000));
        Optional<EtcdEndpoints> etcd = standalone ? Optional.empty() : Optional.of(EtcdOptions.parse(v.text(ETCD),
                ListenerOptions.path(v, ETCD_CA_FILE), ListenerOptions.path(v, ETCD_CERT_FILE), ListenerOptions.path(v, ETCD_KEY_FILE)));
        return new ManagerConfig(cluster, nodeId, etcd,
                ListenAddress.parse(PEER_LISTEN, v.text(PEER_LISTEN)), ListenAddress.parse(HTTP_LISTEN, v.text(HTTP_LISTEN)),
                standalone, LibraryConfigs.scope(emptyScope, v.list(METADATA_NAMESPACE)), v.text(LOG_LEVEL).toUpperCase(Locale.ROOT),
                tiers, http, inventory, index, route, lease(v), ListenerOptions.peerTls(v, nodeId), transfer(v), heal(v), AdmissionOptions.parse(v), SpeculationOptions.parse(v));
    }

    private static Heal heal(RawValues v) {
        return new Heal(!v.flag(SELF_HEAL_DISABLED), v.ms(HEAL_BACKOFF_MIN_MS, 1, 3_600_000),
                v.ms(HEAL_BACKOFF_MAX_MS, 1, 3_600_000), v.count(HEAL_ATTEMPTS_MAX, 0, 1_000_000));
    }

    private static Transfer transfer(RawValues v) {
        String backend = v.text(TRANSFER_BACKEND);
        BackendPolicy policy = backendPolicy(backend);
        require(policy != null, "--transfer-backend must be shared-memory-preferred or tcp, got '" + backend + "'");
        Optional<ListenAddress> advertise = v.given(TRANSFER_DATA_ADVERTISE)
                ? Optional.of(ListenAddress.parse(TRANSFER_DATA_ADVERTISE, v.text(TRANSFER_DATA_ADVERTISE)))
                : Optional.empty();
        advertise.ifPresent(a -> require(a.port() != 0, "--transfer-data-advertise must name a port, got "
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
                v.count(TRANSFER_DATA_READS_QUEUED_PER_CONNECTION_MAX, 1, 1_000_000), ListenerOptions.tlsProvider(v),
                v.count(RESTORE_ROUTE_READS_IN_FLIGHT_MAX, 1, TransferConfig.DEFAULT_READS_IN_FLIGHT_MAX),
                !v.flag(TRANSFER_DATA_CHANNEL_AUTHORIZE_DISABLED));
    }

    /**
     * The transfer settings in orbitkv.transfer's terms: the options above, {@code --block-bytes-max} as the
     * block bound of both sides, the prefetch share capped by the total pinned bytes, the rest transfer's
     * defaults.
     */
    public TransferConfig transferConfig() {
        return LibraryConfigs.transferConfig(tiers, transfer);
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
        return LibraryConfigs.membershipConfig(lease);
    }

    /** The peer listener's and channels' gRPC inbound message bound, derived from the session's frame bounds. */
    public int peerInboundMessageBytesMax() {
        SessionConfig s = sessionConfig();
        long bound = Math.max(s.frameEncodedBytesMax(), s.openEncodedBytesMax()) + (long) PEER_MESSAGE_MARGIN_BYTES;
        return (int) Math.min(Integer.MAX_VALUE, bound);
    }

    /** The source inventory settings (DESIGN §9) in orbitkv.inventory's terms. */
    public InventoryConfig inventoryConfig() {
        return LibraryConfigs.inventoryConfig(inventory);
    }

    /**
     * The InventorySession settings (DESIGN §5, §9) of both ends: receive window, frame bounds, ACK cadence,
     * liveness and sessions per requester come from the options; the rest are the session's defaults.
     */
    public SessionConfig sessionConfig() {
        return LibraryConfigs.sessionConfig(inventory, index);
    }

    /** The GlobalIndex settings (DESIGN §9) in orbitkv.index's terms; lookup bounds are the API's (IDX-9). */
    public IndexConfig indexConfig() {
        return LibraryConfigs.indexConfig(index);
    }

    /**
     * The one place where relations between settings are checked (BND-6), the consumers' relations
     * included; each message names both options as typed.
     */
    private static void validate(String cluster, Optional<EtcdEndpoints> etcd, ListenAddress peer, ListenAddress httpListen,
                                 boolean standalone, String logLevel, Tiers t, Http h, Inventory i, Index x, Route r,
                                 Lease l) {
        require(standalone || (cluster != null && etcd.isPresent()),
                "--cluster and --etcd are required unless --standalone is given");
        require(!standalone || etcd.isEmpty(), "--standalone and --etcd cannot be combined: a standalone Manager runs without etcd");
        require(LOG_LEVELS.contains(logLevel), "--log-level must be one of ERROR, WARN, INFO, DEBUG, TRACE, got '" + logLevel + "'");
        require(peer.port() == 0 || !peer.equals(httpListen),
                "--http-listen and --peer-listen must differ, both are " + peer);
        SettingRelations.tiers(t, h);
        SettingRelations.http(h);
        SettingRelations.inventory(i, x);
        SettingRelations.lease(l);
        require(r.alternativesPerBoundaryMax() <= r.alternativesPerBatchMax(), "--route-alternatives-per-boundary-max ("
                + r.alternativesPerBoundaryMax() + ") must not exceed --route-alternatives-per-batch-max ("
                + r.alternativesPerBatchMax() + ")");
    }

    /** DESIGN §9 source-side bounds, and the source's send scheduling (issue 39 item 5, ROUTE-10). */
    private static Inventory inventory(RawValues v) {
        return new Inventory(v.ms(COALESCING_WINDOW_MS, 0, 1000), v.ms(COALESCING_WAIT_MAX_MS, 0, 1000),
                v.count(FRAME_INPUT_RECORDS_MAX), v.size(FRAME_INPUT_BYTES_MAX, 1), v.size(FRAME_ENCODED_BYTES_MAX, 1024),
                v.size(FRAME_DECODED_BYTES_MAX, 1024), v.size(RECEIVE_WINDOW_BYTES, 1024),
                v.count(SNAPSHOT_PAGE_RECORDS_MAX), v.size(SNAPSHOT_PAGE_BYTES_MAX, 1),
                v.size(JOURNAL_RETENTION_BYTES_MAX, 1), v.count(JOURNAL_RETENTION_RECORDS_MAX),
                v.ms(ACK_PENDING_PROGRESS_MS, 1, 60_000), v.ms(IDLE_LIVENESS_MS, 1, 60_000),
                v.count(SOURCE_SESSIONS_MAX, 1, SOURCE_SESSIONS_MAX_LIMIT), v.count(SOURCE_SEND_STEPS_MAX, 1, 1024),
                !v.flag(SOURCE_SEND_PRIORITY_DISABLED), LibraryConfigs.nodeIds(v, SOURCE_PRIORITY_REQUESTERS),
                v.count(COALESCING_IMMEDIATE_READS_MAX, 0, InventoryConfig.IMMEDIATE_READS_PER_WINDOW_MAX));
    }

    private static <T> T parse(Setting s, java.util.function.Supplier<T> parser) {
        try {
            return parser.get();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(s.flag() + ": " + e.getMessage());
        }
    }
}
