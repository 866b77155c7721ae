package orbitkv.server.config;

import static orbitkv.server.config.Setting.*;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeId;

/**
 * The validated configuration of one Manager (DESIGN §7 CLI, §9 bounds). Built only by {@link #from},
 * which parses every value against its own bound and then calls {@link #validate} once for the relations
 * between settings (BND-6); a ManagerConfig that exists is safe to run.
 *
 * @param cluster cluster name, null when standalone without a name
 * @param nodeId node id
 * @param etcdEndpoints etcd client URLs (empty when standalone)
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
 * @param lease DESIGN §3 lease timing passed to orbitkv.membership
 */
public record ManagerConfig(String cluster, NodeId nodeId, List<URI> etcdEndpoints, ListenAddress peerListen,
                            ListenAddress httpListen, boolean standalone, Scope scope, String logLevel,
                            Tiers tiers, Http http, Inventory inventory, Index index, Route route,
                            MembershipConfig lease) {
    /** The await timeout cap of the API contract (API-4). */
    public static final long AWAIT_TIMEOUT_MS_CAP = 30_000;
    /** Node id of a standalone Manager started without --node-id. */
    public static final String STANDALONE_NODE_ID = "standalone";
    /** Framing bytes around one payload in a save body: u16 + 64-byte key + u32. */
    public static final long RECORD_FRAMING_BYTES_MAX = 70;
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

    /** HTTP settings. */
    public record Http(long saveBodyBytesMax, long jsonBodyBytesMax, int requestsInFlightMax, long shutdownDrainMs,
                       long awaitTimeoutMsMax, int awaitWaitersMax) {}

    /** DESIGN §9 source-side bounds. */
    public record Inventory(long coalescingWindowMs, long coalescingWaitMaxMs, int frameInputRecordsMax,
                            long frameInputBytesMax, long frameEncodedBytesMax, long frameDecodedBytesMax,
                            long receiveWindowBytes, int snapshotPageRecordsMax, long snapshotPageBytesMax,
                            long journalRetentionBytesMax, int journalRetentionRecordsMax, long ackPendingProgressMs,
                            long idleLivenessMs) {}

    /** DESIGN §9 requester-side bounds. */
    public record Index(long freshnessBudgetMs, long indexBudgetBytes, int peerSessionsMax) {}

    /** DESIGN §9 route search bounds. */
    public record Route(int alternativesPerBoundaryMax, int alternativesPerBatchMax, int observationsMin,
                        int replansMax) {}

    public ManagerConfig {
        Objects.requireNonNull(nodeId, "nodeId");
        etcdEndpoints = List.copyOf(etcdEndpoints);
        Objects.requireNonNull(peerListen, "peerListen");
        Objects.requireNonNull(httpListen, "httpListen");
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(tiers, "tiers");
        Objects.requireNonNull(http, "http");
        Objects.requireNonNull(inventory, "inventory");
        Objects.requireNonNull(index, "index");
        Objects.requireNonNull(route, "route");
        Objects.requireNonNull(lease, "lease");
        validate(cluster, etcdEndpoints, peerListen, httpListen, standalone, logLevel, tiers, http, inventory, index, route);
        try {
            inventoryConfig(inventory);
            indexConfig(index);
        } catch (IllegalArgumentException e) { // the consumers' own rules, checked at startup too (BND-6)
            throw new ConfigException("inventory/index settings: " + e.getMessage());
        }
        try {
            sessionConfig(inventory, index).requireCompatible(inventoryConfig(inventory));
        } catch (IllegalArgumentException e) { // the session's relations, in option names (BND-6)
            throw new ConfigException("session settings: " + sessionOptionNames(e.getMessage()));
        }
    }

    /**
     * Parses and validates {@code values} (defaults fill what is not given).
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
        Http http = new Http(v.size(SAVE_BODY_BYTES_MAX, 1), v.size(JSON_BODY_BYTES_MAX, 1024),
                v.count(HTTP_REQUESTS_IN_FLIGHT_MAX), v.ms(SHUTDOWN_DRAIN_MS, 0, 600_000),
                v.ms(AWAIT_TIMEOUT_MS_MAX, 1, AWAIT_TIMEOUT_MS_CAP), v.count(AWAIT_WAITERS_MAX));
        Inventory inventory = new Inventory(v.ms(COALESCING_WINDOW_MS, 0, 1000), v.ms(COALESCING_WAIT_MAX_MS, 0, 1000),
                v.count(FRAME_INPUT_RECORDS_MAX), v.size(FRAME_INPUT_BYTES_MAX, 1), v.size(FRAME_ENCODED_BYTES_MAX, 1024),
                v.size(FRAME_DECODED_BYTES_MAX, 1024), v.size(RECEIVE_WINDOW_BYTES, 1024),
                v.count(SNAPSHOT_PAGE_RECORDS_MAX), v.size(SNAPSHOT_PAGE_BYTES_MAX, 1),
                v.size(JOURNAL_RETENTION_BYTES_MAX, 1), v.count(JOURNAL_RETENTION_RECORDS_MAX),
                v.ms(ACK_PENDING_PROGRESS_MS, 1, 60_000), v.ms(IDLE_LIVENESS_MS, 1, 60_000));
        Index index = new Index(v.ms(FRESHNESS_BUDGET_MS, 1, 3_600_000), v.size(INDEX_BUDGET_BYTES, 1),
                v.count(PEER_SESSIONS_MAX));
        Route route = new Route(v.count(ROUTE_ALTERNATIVES_PER_BOUNDARY_MAX), v.count(ROUTE_ALTERNATIVES_PER_BATCH_MAX),
                v.count(ROUTE_OBSERVATIONS_MIN), (int) v.ms(ROUTE_REPLANS_MAX, 0, 16));
        return new ManagerConfig(cluster, nodeId, standalone ? List.of() : etcdUrls(v.text(ETCD)),
                ListenAddress.parse(PEER_LISTEN, v.text(PEER_LISTEN)), ListenAddress.parse(HTTP_LISTEN, v.text(HTTP_LISTEN)),
                standalone, scope(emptyScope, v.list(METADATA_NAMESPACE)), v.text(LOG_LEVEL).toUpperCase(Locale.ROOT),
                tiers, http, inventory, index, route, lease(v));
    }

    /**
     * The lease timing; {@link MembershipConfig} checks the relations (margin &lt; TTL, renewal and call
     * deadline &lt; TTL - margin) and its message names the settings, translated here to option names.
     */
    private static MembershipConfig lease(RawValues v) {
        MembershipConfig d = MembershipConfig.defaults();
        long ttl = v.ms(LEASE_TTL_MS, 2_000, 3_600_000);
        long margin = v.ms(FENCE_SAFETY_MARGIN_MS, 0, 3_600_000);
        long renewal = v.ms(RENEWAL_INTERVAL_MS, 1, 3_600_000);
        long call = v.ms(ETCD_CALL_TIMEOUT_MS, 1, 3_600_000);
        try {
            return new MembershipConfig(ttl, margin, renewal, call, d.retryBackoffMinMs(), d.retryBackoffMaxMs(),
                    d.memberPageSize());
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage().replace("leaseTtlMs", LEASE_TTL_MS.flag())
                    .replace("fenceSafetyMarginMs", FENCE_SAFETY_MARGIN_MS.flag())
                    .replace("renewalIntervalMs", RENEWAL_INTERVAL_MS.flag())
                    .replace("etcdCallTimeoutMs", ETCD_CALL_TIMEOUT_MS.flag()));
        }
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
                x.peerSessionsMax(), d.sessionsPerSourceMax(), d.reconnectBackoffMinMs(), d.reconnectBackoffMaxMs(),
                d.snapshotRetryBackoffMinMs(), d.snapshotRetryBackoffMaxMs(), d.replayIntervalsPerRead(),
                d.committedViewsMax());
    }

    /** SessionConfig's field names in a refusal, translated to the options they come from. */
    public static String sessionOptionNames(String message) {
        return message.replace("SessionConfig.frameEncodedBytesMax", "the session's " + FRAME_ENCODED_BYTES_MAX.flag())
                .replace("SessionConfig.frameDecodedBytesMax", "the session's " + FRAME_DECODED_BYTES_MAX.flag())
                .replace("InventoryConfig.frameEncodedBytesMax", "the source's " + FRAME_ENCODED_BYTES_MAX.flag())
                .replace("InventoryConfig.frameDecodedBytesMax", "the source's " + FRAME_DECODED_BYTES_MAX.flag())
                .replace("receiveWindowBytes", RECEIVE_WINDOW_BYTES.flag())
                .replace("livenessIntervalMs", IDLE_LIVENESS_MS.flag())
                .replace("ackIntervalMs", ACK_PENDING_PROGRESS_MS.flag())
                .replace("sessionsPerRequesterMax", PEER_SESSIONS_MAX.flag())
                .replace("frameEncodedBytesMax", FRAME_ENCODED_BYTES_MAX.flag())
                .replace("frameDecodedBytesMax", FRAME_DECODED_BYTES_MAX.flag());
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

    /** The one place where relations between settings are checked (BND-6); each message names both sides. */
    private static void validate(String cluster, List<URI> etcd, ListenAddress peer, ListenAddress httpListen,
                                 boolean standalone, String logLevel, Tiers t, Http h, Inventory i, Index x, Route r) {
        requireRelation(standalone || (cluster != null && !etcd.isEmpty()),
                "--cluster and --etcd are required unless --standalone is given");
        requireRelation(!standalone || etcd.isEmpty(), "--standalone and --etcd cannot be combined: a standalone Manager runs without etcd");
        requireRelation(LOG_LEVELS.contains(logLevel), "--log-level must be one of ERROR, WARN, INFO, DEBUG, TRACE, got '" + logLevel + "'");
        requireRelation(peer.port() == 0 || !peer.equals(httpListen),
                "--http-listen and --peer-listen must differ, both are " + peer);
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
        requireRelation(i.coalescingWindowMs() <= i.coalescingWaitMaxMs(), "--coalescing-window-ms ("
                + i.coalescingWindowMs() + ") must not exceed --coalescing-wait-max-ms (" + i.coalescingWaitMaxMs() + ")");
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
        requireRelation(i.frameInputBytesMax() <= i.journalRetentionBytesMax(), "--journal-retention-bytes-max ("
                + i.journalRetentionBytesMax() + ") must be at least --frame-input-bytes-max (" + i.frameInputBytesMax() + ")");
        requireRelation(i.idleLivenessMs() < x.freshnessBudgetMs(), "--idle-liveness-ms (" + i.idleLivenessMs()
                + ") must be less than --freshness-budget-ms (" + x.freshnessBudgetMs()
                + "): idle owners would turn stale between liveness frames");
        requireRelation(r.alternativesPerBoundaryMax() <= r.alternativesPerBatchMax(), "--route-alternatives-per-boundary-max ("
                + r.alternativesPerBoundaryMax() + ") must not exceed --route-alternatives-per-batch-max ("
                + r.alternativesPerBatchMax() + ")");
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

    private static List<URI> etcdUrls(String text) {
        List<URI> urls = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String p = part.strip();
            URI uri;
            try {
                uri = new URI(p);
            } catch (java.net.URISyntaxException e) {
                throw new ConfigException("--etcd must be a comma-separated list of http://host:port, got '" + p + "'");
            }
            requireRelation("http".equals(uri.getScheme()) && uri.getHost() != null && uri.getPort() > 0
                            && (uri.getPath() == null || uri.getPath().isEmpty()) && uri.getQuery() == null,
                    "--etcd must be a comma-separated list of http://host:port, got '" + p + "'");
            urls.add(uri);
        }
        return urls;
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
