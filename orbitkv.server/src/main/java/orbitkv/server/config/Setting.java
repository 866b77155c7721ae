package orbitkv.server.config;

import java.util.Locale;

/**
 * Every Manager setting: its option name (the flag is {@code --name}; the config file key is {@code name}),
 * its value kind, its default (null = none) and one doc line. This table is the single source of truth for
 * the CLI, the config file and docs/api.md's configuration section (BND-6).
 *
 * <p>Settings marked "passed to ..." belong to DESIGN §9 and are consumed by the inventory, index or
 * recovery module when the wiring lands; they are parsed and cross-validated now so that an unsafe
 * combination is refused at startup already.
 */
public enum Setting {
    // DESIGN §7 CLI contract
    CLUSTER("cluster", Kind.TEXT, null, "cluster name (the etcd guard prefix); required unless --standalone"),
    NODE_ID("node-id", Kind.TEXT, null, "stable node id, 1..64 of [A-Za-z0-9._-]; default 'standalone' with --standalone"),
    ETCD("etcd", Kind.TEXT, null, "comma-separated etcd client URLs http://host:port (or all https://host:port with --etcd-ca-file, --etcd-cert-file and --etcd-key-file); required unless --standalone"),
    ETCD_CA_FILE("etcd-ca-file", Kind.TEXT, null, "PEM CA certificate(s) trusted for the etcd servers (https:// endpoints; with --etcd-cert-file and --etcd-key-file)"),
    ETCD_CERT_FILE("etcd-cert-file", Kind.TEXT, null, "PEM client certificate presented to etcd (--client-cert-auth)"),
    ETCD_KEY_FILE("etcd-key-file", Kind.TEXT, null, "PEM PKCS#8 private key of --etcd-cert-file"),
    PEER_LISTEN("peer-listen", Kind.TEXT, "127.0.0.1:0", "HOST:PORT of the peer (InventorySession, transfer) listener; port 0 picks one"),
    PEER_TLS_CERT_FILE("peer-tls-cert-file", Kind.TEXT, null, "PEM certificate of this Manager on the peer listener and its peer channels (mutual TLS; with --peer-tls-key-file and --peer-tls-ca-file)"),
    PEER_TLS_KEY_FILE("peer-tls-key-file", Kind.TEXT, null, "PEM PKCS#8 private key of --peer-tls-cert-file"),
    PEER_TLS_CA_FILE("peer-tls-ca-file", Kind.TEXT, null, "PEM CA certificate(s) that sign every peer's certificate (both directions)"),
    HTTP_LISTEN("http-listen", Kind.TEXT, "127.0.0.1:8090", "HOST:PORT of the HTTP API; port 0 picks one"),
    DRAM("dram", Kind.SIZE, "1GiB", "DRAM tier bytes (SIZE: bytes or KiB/MiB/GiB suffix)"),
    SSD_DIR("ssd-dir", Kind.TEXT, null, "directory of the SSD tier; its block files are deleted at start (no durable restart)"),
    SSD("ssd", Kind.SIZE, null, "SSD tier bytes (SIZE); requires --ssd-dir"),
    METADATA_NAMESPACE("metadata-namespace", Kind.TEXT_LIST, null, "subscribe to this namespace (repeatable; omitted = all namespaces)"),
    METADATA_EMPTY_SCOPE("metadata-empty-scope", Kind.FLAG, "false", "subscribe to no namespace (local cache only)"),
    STANDALONE("standalone", Kind.FLAG, "false", "run without etcd: no distributed metadata, coverage Unavailable"),
    LOG_LEVEL("log-level", Kind.TEXT, "INFO", "ERROR, WARN, INFO, DEBUG or TRACE"),
    // Tiers and HTTP (consumed by this module)
    DRAM_DIR("dram-dir", Kind.TEXT, "/dev/shm", "directory of the DRAM arena file (a tmpfs)"),
    DRAM_PINS_MAX("dram-pins-max", Kind.COUNT, "4096", "concurrently pinned DRAM blocks"),
    SSD_PINS_MAX("ssd-pins-max", Kind.COUNT, "1024", "concurrently pinned SSD blocks"),
    DRAM_PINNED_BYTES_MAX("dram-pinned-bytes-max", Kind.SIZE, "512MiB", "payload bytes of pinned DRAM blocks (readers); at least --block-bytes-max"),
    SSD_PINNED_BYTES_MAX("ssd-pinned-bytes-max", Kind.SIZE, "512MiB", "payload bytes of pinned SSD blocks (readers); at least --block-bytes-max"),
    RESTORE_BYTES_IN_FLIGHT_MAX("restore-bytes-in-flight-max", Kind.SIZE, "256MiB", "restore response bytes held at once across requests (direct memory); beyond it a restore stops its prefix with stop=response-memory"),
    SSD_QUEUE_WRITES_MAX("ssd-queue-writes-max", Kind.COUNT, "1024", "queued SSD writes"),
    SSD_QUEUE_BYTES_MAX("ssd-queue-bytes-max", Kind.SIZE, "256MiB", "queued SSD write bytes"),
    BLOCK_BYTES_MAX("block-bytes-max", Kind.SIZE, "64MiB", "payload bytes of one block, at most 128MiB (the largest block tested end to end; one 256-token chunk of an 8B model in bf16 is 32MiB)"),
    SAVE_BODY_BYTES_MAX("save-body-bytes-max", Kind.SIZE, "256MiB", "body bytes of one /cache/save request"),
    JSON_BODY_BYTES_MAX("json-body-bytes-max", Kind.SIZE, "64KiB", "body bytes of one JSON request"),
    HTTP_REQUESTS_IN_FLIGHT_MAX("http-requests-in-flight-max", Kind.COUNT, "256", "HTTP requests admitted at once (receiving their body or executing); /health and /metrics are outside this bound"),
    HTTP_PROBES_IN_FLIGHT_MAX("http-probes-in-flight-max", Kind.COUNT, "16", "/health, /metrics and /cache/limits requests executing at once (their own slots)"),
    HTTP_BODY_BYTES_IN_FLIGHT_MAX("http-body-bytes-in-flight-max", Kind.SIZE, "1GiB", "request body bytes admitted at once across all connections (declared lengths reserved up front)"),
    HTTP_HEADER_TIMEOUT_MS("http-header-timeout-ms", Kind.MS, "10000", "a request line and its headers must arrive within this after their first byte; beyond: 408 and close"),
    HTTP_BODY_PROGRESS_MS("http-body-progress-ms", Kind.MS, "10000", "window of the body progress rule: each window must deliver --http-body-progress-bytes-min (or the rest of the body); beyond: 408 and close"),
    HTTP_BODY_PROGRESS_BYTES_MIN("http-body-progress-bytes-min", Kind.SIZE, "8MiB", "body bytes a request must deliver per --http-body-progress-ms window"),
    HTTP_IDLE_TIMEOUT_MS("http-idle-timeout-ms", Kind.MS, "120000", "a keep-alive connection with no request in progress is closed after this"),
    HTTP_WRITE_STALL_MS("http-write-stall-ms", Kind.MS, "30000", "an answer whose pending bytes make no progress into the socket for this long (the client stopped reading) closes its connection, counted as write_stall; its request slot and restore budget return"),
    HTTP_LINGER_MS("http-linger-ms", Kind.MS, "5000", "after an early refusal, unread body bytes are read and discarded for at most this long, so clients that write the whole body first still read the answer"),
    HTTP_LINGER_BYTES_MAX("http-linger-bytes-max", Kind.SIZE, "64MiB", "bytes read and discarded after an early refusal before the connection is closed"),
    HTTP_PIPELINED_REQUESTS_MAX("http-pipelined-requests-max", Kind.COUNT, "256", "requests a connection may have decoded and waiting behind the one it executes; beyond: 429 and close"),
    HTTP_TOKEN_FILE("http-token-file", Kind.TEXT, null, "file holding the bearer token required by save, evict, sync and await, also accepted where --http-read-token-file is required (none: no token); not readable by others"),
    SHUTDOWN_DRAIN_MS("shutdown-drain-ms", Kind.MS, "10000", "bound on draining requests at shutdown"),
    AWAIT_TIMEOUT_MS_MAX("await-timeout-ms-max", Kind.MS, "30000", "cap of /cache/metadata/await timeout_ms (at most 30000)"),
    AWAIT_WAITERS_MAX("await-waiters-max", Kind.COUNT, "64", "concurrent /cache/metadata/await waiters"),
    // issue 33: HTTP security
    HTTP_READ_TOKEN_FILE("http-read-token-file", Kind.TEXT, null, "file holding the bearer token required by query, restore, status, routes and residences (the --http-token-file token is accepted too; none: reads are open); not readable by others"),
    HTTP_BODY_BYTES_IN_FLIGHT_PER_CLIENT_MAX("http-body-bytes-in-flight-per-client-max", Kind.SIZE, "512MiB", "request body bytes admitted at once for one client address, capped at --http-body-bytes-in-flight-max; at least --save-body-bytes-max; beyond: 429"),
    HTTP_TLS_CERT_FILE("http-tls-cert-file", Kind.TEXT, null, "PEM certificate of the HTTP API listener: it speaks TLS only (with --http-tls-key-file; none: plaintext HTTP)"),
    HTTP_TLS_KEY_FILE("http-tls-key-file", Kind.TEXT, null, "PEM PKCS#8 private key of --http-tls-cert-file"),
    HTTP_TLS_CLIENT_CA_FILE("http-tls-client-ca-file", Kind.TEXT, null, "PEM CA certificate(s): HTTP API clients must present a certificate signed by them (requires --http-tls-cert-file)"),
    HTTP_UNIX_SOCKET("http-unix-socket", Kind.TEXT, null, "path of a Unix-domain socket serving the HTTP API besides --http-listen (same handler, limits and tokens; plaintext; all its connections are one client); its directory must exist and not be writable by others"),
    HTTP_UNIX_SOCKET_MODE("http-unix-socket-mode", Kind.TEXT, "0600", "octal permissions of the --http-unix-socket file (0600 or 0660 for a group of engines; others get nothing)"),
    // DESIGN §3, passed to orbitkv.membership (MembershipConfig; MEM-6, MEM-8)
    LEASE_TTL_MS("lease-ttl-ms", Kind.MS, "15000", "member lease TTL, a whole number of seconds"),
    FENCE_SAFETY_MARGIN_MS("fence-safety-margin-ms", Kind.MS, "3000", "the local fence falls at last confirmed renewal + TTL - this margin"),
    RENEWAL_INTERVAL_MS("renewal-interval-ms", Kind.MS, "2000", "delay between confirmed lease renewals"),
    ETCD_CALL_TIMEOUT_MS("etcd-call-timeout-ms", Kind.MS, "2000", "deadline of every etcd call"),
    // issue 17 item 5: a fenced incarnation heals itself (a new incarnation at the next epoch)
    SELF_HEAL_DISABLED("self-heal-disabled", Kind.FLAG, "false", "a fenced incarnation stays fenced until the process restarts (no self-healing)"),
    HEAL_BACKOFF_MIN_MS("heal-backoff-min-ms", Kind.MS, "1000", "delay after a fence before the first heal attempt; doubles (jittered) after each failed attempt"),
    HEAL_BACKOFF_MAX_MS("heal-backoff-max-ms", Kind.MS, "30000", "cap of the delay between heal attempts"),
    HEAL_ATTEMPTS_MAX("heal-attempts-max", Kind.COUNT, "0", "heal attempts per fence before the Manager stays fenced; 0 = keep trying, at most one attempt per --heal-backoff-max-ms"),
    // DESIGN §9, passed to orbitkv.inventory
    COALESCING_WINDOW_MS("coalescing-window-ms", Kind.MS, "2", "coalescing window (0 disables coalescing)"),
    COALESCING_WAIT_MAX_MS("coalescing-wait-max-ms", Kind.MS, "5", "max intentional publication wait"),
    // issue 37 item 2: an idle stream publishes at once
    COALESCING_IMMEDIATE_READS_MAX("coalescing-immediate-reads-max", Kind.COUNT, "16", "reads a publisher starts at once, without the coalescing wait, after its stream was idle for a window (0..64; 0 = every read waits for the window or the cap)"),
    FRAME_INPUT_RECORDS_MAX("frame-input-records-max", Kind.COUNT, "1024", "input interval records per frame"),
    FRAME_INPUT_BYTES_MAX("frame-input-bytes-max", Kind.SIZE, "512KiB", "input interval bytes per frame"),
    FRAME_ENCODED_BYTES_MAX("frame-encoded-bytes-max", Kind.SIZE, "1MiB", "encoded bytes of one frame"),
    FRAME_DECODED_BYTES_MAX("frame-decoded-bytes-max", Kind.SIZE, "4MiB", "decoded bytes of one frame"),
    RECEIVE_WINDOW_BYTES("receive-window-bytes", Kind.SIZE, "8MiB", "outstanding frame bytes per session (credits)"),
    SNAPSHOT_PAGE_RECORDS_MAX("snapshot-page-records-max", Kind.COUNT, "1024", "records per snapshot page"),
    SNAPSHOT_PAGE_BYTES_MAX("snapshot-page-bytes-max", Kind.SIZE, "512KiB", "bytes per snapshot page"),
    JOURNAL_RETENTION_BYTES_MAX("journal-retention-bytes-max", Kind.SIZE, "64MiB", "retained journal bytes"),
    JOURNAL_RETENTION_RECORDS_MAX("journal-retention-records-max", Kind.COUNT, "1000000", "retained journal records"),
    ACK_PENDING_PROGRESS_MS("ack-pending-progress-ms", Kind.MS, "10", "ACK at the latest after this much pending progress"),
    IDLE_LIVENESS_MS("idle-liveness-ms", Kind.MS, "1000", "liveness interval of an idle session"),
    SOURCE_SESSIONS_MAX("source-sessions-max", Kind.COUNT, "1024", "InventorySessions this source serves at once (1..65536); an Open beyond them is refused with SESSION_LIMIT (BND-3)"),
    // issue 39 item 5: the source's send scheduling (ROUTE-10)
    SOURCE_SEND_STEPS_MAX("source-send-steps-max", Kind.COUNT, "4", "pump steps of this source's InventorySessions running at once (1..1024); sessions with send work beyond them wait, one waiting on a barrier (FlushThrough) first, then favoured subscriptions (ROUTE-10)"),
    SOURCE_SEND_PRIORITY_DISABLED("source-send-priority-disabled", Kind.FLAG, "false", "the source's send scheduling ignores barriers and --source-priority-requesters: first come first served (ROUTE-10)"),
    SOURCE_PRIORITY_REQUESTERS("source-priority-requesters", Kind.TEXT, null, "comma-separated node ids whose whole subscriptions this source's send scheduling favours, at most --source-sessions-max (none: only barriers are favoured; ROUTE-10)"),
    // DESIGN §9, passed to orbitkv.index
    FRESHNESS_BUDGET_MS("freshness-budget-ms", Kind.MS, "5000", "receipt age beyond which an owner view is stale"),
    INDEX_BUDGET_BYTES("index-budget-bytes", Kind.SIZE, "256MiB", "GlobalIndex bytes (rows + reverse index + staging)"),
    PEER_SESSIONS_MAX("peer-sessions-max", Kind.COUNT, "128", "subscriber sessions of this requester"),
    // DESIGN §8, passed to orbitkv.transfer (TransferConfig; source and requester sides)
    TRANSFER_DATA_PORT("transfer-data-port", Kind.COUNT, "0", "TCP port of the transfer data listener, bound on the --peer-listen host (0 picks one); advertised in every grant, never in etcd"),
    TRANSFER_DATA_ADVERTISE("transfer-data-advertise", Kind.TEXT, null, "HOST:PORT named in grants instead of the bound data listener (a proxy or NAT in front of it); default: the bound address"),
    TRANSFER_BACKEND("transfer-backend", Kind.TEXT, "shared-memory-preferred", "READ backend of peer restores: shared-memory-preferred (same host: copy from the source's mapped DRAM arena; otherwise and for SSD blocks TCP) or tcp (always TCP); a restore's transfer_backend field overrides it"),
    TRANSFER_PINS_PER_REQUESTER_MAX("transfer-pins-per-requester-max", Kind.COUNT, "1024", "source side: blocks one requester incarnation may hold pinned through grants"),
    TRANSFER_PINNED_BYTES_PER_REQUESTER_MAX("transfer-pinned-bytes-per-requester-max", Kind.SIZE, "1GiB", "source side: payload bytes one requester incarnation may hold pinned; at least --block-bytes-max"),
    TRANSFER_PINS_TOTAL_MAX("transfer-pins-total-max", Kind.COUNT, "8192", "source side: blocks pinned through grants for all requesters"),
    TRANSFER_PINNED_BYTES_TOTAL_MAX("transfer-pinned-bytes-total-max", Kind.SIZE, "4GiB", "source side: payload bytes pinned through grants for all requesters"),
    TRANSFER_GRANT_EXPIRY_MS("transfer-grant-expiry-ms", Kind.MS, "10000", "source side: a grant (and its pins) ends this long after it was issued unless released first"),
    TRANSFER_EGRESS_IN_FLIGHT_BYTES_MAX("transfer-egress-in-flight-bytes-max", Kind.SIZE, "256MiB", "source side: payload bytes handed to data connections and not yet written; a READ beyond it is refused (EGRESS_LIMIT), never queued"),
    TRANSFER_RECEIVE_IN_FLIGHT_BYTES_MAX("transfer-receive-in-flight-bytes-max", Kind.SIZE, "256MiB", "requester side: receive window, bytes of admitted peer READs not yet physically ended (apart from the --receive-window-bytes metadata credits); a peer route takes its share before its Authorize and is refused (receive-credits) when it does not fit"),
    TRANSFER_DATA_CHANNEL_AUTHORIZE_DISABLED("transfer-data-channel-authorize-disabled", Kind.FLAG, "false", "requester side: ask every Authorize over the peer gRPC listener, never as an AUTHORIZE frame on a data connection (issue 37 item 5: by default a source's later Authorizes go on the data channel once its first grant named the endpoint)"),
    TRANSFER_READS_PER_CONNECTION_MAX("transfer-reads-per-connection-max", Kind.COUNT, "4", "requester side: READs of one grant pipelined on one TCP data connection, 1..64 (1: one READ at a time per connection); the source answers them in order"),
    // issue 33: data listener bounds
    TRANSFER_DATA_CONNECTIONS_MAX("transfer-data-connections-max", Kind.COUNT, "1024", "source side: data connections open at once on the transfer data listener; one more is closed as soon as it is accepted (counted: connections_max)"),
    TRANSFER_DATA_CONNECTIONS_PER_ADDRESS_MAX("transfer-data-connections-per-address-max", Kind.COUNT, "64", "source side: data connections open at once from one peer IP address, 16..--transfer-data-connections-max (a requester keeps up to 16 per source); beyond: closed at accept (counted: connections_per_address_max)"),
    TRANSFER_DATA_HEADER_TIMEOUT_MS("transfer-data-header-timeout-ms", Kind.MS, "5000", "source side: a 40-byte READ request must arrive in full this long after its first bytes; beyond: the data connection is closed (counted: header)"),
    TRANSFER_DATA_IDLE_TIMEOUT_MS("transfer-data-idle-timeout-ms", Kind.MS, "120000", "source side: a data connection with neither input nor output progress this long is closed (counted: idle)"),
    TRANSFER_DATA_READS_QUEUED_PER_CONNECTION_MAX("transfer-data-reads-queued-per-connection-max", Kind.COUNT, "64", "source side: READs of one data connection decoded and not yet answered out to the socket; at the bound the listener stops reading that connection until answers drain; at least --transfer-reads-per-connection-max (and every peer's)"),
    // issue 33: tls provider
    TRANSFER_TLS_PROVIDER("transfer-tls-provider", Kind.TEXT, "auto", "TLS implementation of the data channel and the peer gRPC TLS (with --peer-tls-*): auto (openssl when netty-tcnative loads, else jdk), jdk or openssl (refused at start when it does not load); logged at start"),
    // issue 34: restore
    RESTORE_ROUTE_READS_IN_FLIGHT_MAX("restore-route-reads-in-flight-max", Kind.COUNT, "4", "requester side: READs of one peer restore route in flight at once (in order, each into its own record), 1..64; at most --transfer-reads-per-connection-max times the 16 data connections to one source; its largest blocks are the route's receive credits"),
    // issue 40: S7 retention and declared-demand prefetch (ROUTE-12, ROUTE-13)
    RETAIN_COPY_COST_PERCENT("retain-copy-cost-percent", Kind.COUNT, "10", "0..100: the cost of copying a fetched block into the local DRAM tier, in percent of fetching it again; a block is kept (store_local, prefetch) only when one reuse saves more than this copy plus the bytes its reservation would evict"),
    PREFETCH_KEYS_QUEUED_MAX("prefetch-keys-queued-max", Kind.COUNT, "1024", "declared-demand prefetch keys queued or in flight at once, and prefetched blocks tracked until used; beyond: the rest of a /cache/prefetch is refused (queue-full)"),
    // issue 39: S6 node-local admission (a window and a pacer per NIC and direction)
    ADMISSION_DISABLED("admission-disabled", Kind.FLAG, "false", "no node-local admission window: Manager READs take only --transfer-receive-in-flight-bytes-max and the /admission API answers 503 ADMISSION_DISABLED"),
    ADMISSION_NICS("admission-nics", Kind.TEXT, "lo", "comma-separated NICs of the node-local admission window, each NAME or NAME:RATE (SIZE per second, overriding --admission-pace-bytes-per-second); each NIC has an rx and a tx lane; Manager READs charge the rx lane of the --peer-listen host's NIC (a wildcard host: the first NIC listed)"),
    ADMISSION_WINDOW_BYTES_MAX("admission-window-bytes-max", Kind.SIZE, "1GiB", "in-flight bytes per NIC and direction, the reserve included; its usable part must hold one READ of --block-bytes-max (peer restore READs are charged one by one) and one lease batch"),
    ADMISSION_PACE_BYTES_PER_SECOND("admission-pace-bytes-per-second", Kind.SIZE, "0", "pacing rate per NIC and direction (SIZE per second; token bucket of one lease batch); 0: unpaced (window only)"),
    ADMISSION_RESERVE_PERCENT("admission-reserve-percent", Kind.COUNT, "10", "0..90: part of each lane's window and rate kept for traffic OrbitKV does not control (engine collectives)"),
    ADMISSION_LEASE_BATCH_BYTES_MAX("admission-lease-batch-bytes-max", Kind.SIZE, "64MiB", "largest credit lease of one request; a larger charge takes several leases; at most the usable window"),
    ADMISSION_LEASE_TTL_MS("admission-lease-ttl-ms", Kind.MS, "30000", "after this a lease's bytes can only return with transport-progress evidence or the submitter's termination (never as unspent)"),
    ADMISSION_QUEUE_MAX("admission-queue-max", Kind.COUNT, "1024", "credit requests waiting at once (scheduled by aging, deadline, remaining work, instance fairness); beyond: queue-full"),
    ADMISSION_AGING_MS("admission-aging-ms", Kind.MS, "200", "a credit request waiting this long is served before younger ones"),
    ADMISSION_SUBMITTERS_MAX("admission-submitters-max", Kind.COUNT, "256", "registered admission submitters (engines, and this Manager twice: its READs and its egress; at least 2); beyond: submitters-full"),
    ADMISSION_LEASES_MAX("admission-leases-max", Kind.COUNT, "4096", "outstanding admission leases; beyond: leases-full"),
    // DESIGN §9, passed to orbitkv.recovery
    ROUTE_ALTERNATIVES_PER_BOUNDARY_MAX("route-alternatives-per-boundary-max", Kind.COUNT, "8", "route alternatives per boundary"),
    ROUTE_ALTERNATIVES_PER_BATCH_MAX("route-alternatives-per-batch-max", Kind.COUNT, "128", "route alternatives per batch"),
    ROUTE_OBSERVATIONS_MIN("route-observations-min", Kind.COUNT, "32", "comparable successes before cost-driven switching"),
    ROUTE_REPLANS_MAX("route-replans-max", Kind.COUNT, "2", "replans within the original deadline"),
    ROUTE_SELECTION("route-selection", Kind.TEXT, "shadow", "restore route selection: fixed (the fixed policy only), shadow (the fixed plan executes; the cost-driven choice is traced) or cost-driven (a switch earned by --route-observations-min executed observations executes)"),
    ROUTE_TRACE_DIR("route-trace-dir", Kind.TEXT, null, "directory, outside any git checkout, of the sampled JSONL route-trace file (bounded: 16 MiB, 100,000 lines); none: no file"),
    ROUTE_TRACE_SAMPLE_EVERY("route-trace-sample-every", Kind.COUNT, "64", "with --route-trace-dir: write every n-th restore's route trace");

    /** How a raw value is parsed. */
    public enum Kind {
        /** Free text, validated by the setting's consumer. */
        TEXT,
        /** Repeatable text. */
        TEXT_LIST,
        /** A boolean switch without a value on the command line. */
        FLAG,
        /** Bytes with an optional KiB/MiB/GiB suffix. */
        SIZE,
        /** Milliseconds, a non-negative integer. */
        MS,
        /** A count: an integer, positive unless the setting says otherwise (--route-replans-max may be 0). */
        COUNT
    }

    private final String optionName;
    private final Kind kind;
    private final String defaultValue;
    private final String doc;

    Setting(String optionName, Kind kind, String defaultValue, String doc) {
        this.optionName = optionName;
        this.kind = kind;
        this.defaultValue = defaultValue;
        this.doc = doc;
    }

    /** The name without dashes: the config file key. */
    public String optionName() {
        return optionName;
    }

    /** {@code --name}. */
    public String flag() {
        return "--" + optionName;
    }

    public Kind kind() {
        return kind;
    }

    /** The default as text, or null when the setting has none. */
    public String defaultValue() {
        return defaultValue;
    }

    public String doc() {
        return doc;
    }

    /** The setting with config-file key {@code name}, or null. */
    public static Setting byOptionName(String name) {
        for (Setting s : values()) {
            if (s.optionName.equals(name)) {
                return s;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return flag().toLowerCase(Locale.ROOT);
    }
}
