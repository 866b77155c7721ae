package orbitkv.transfer;

/**
 * Bounds and timing of transfer, source and requester sides (DESIGN §8, §9; INV-9, BND-1, BND-6). Every
 * setting carries its unit in its name and has a default constant; the compact constructor is the one place
 * that validates them and names both sides of a broken relation.
 *
 * <p>Source side: {@code authorizeKeysMax}, {@code authorizeRequestBytesMax}, the four pin bounds, the
 * prefetch share, {@code blockBytesMax}, {@code grantExpiryMs}, {@code expirySweepIntervalMs} and the egress
 * cap. Requester side: the receive window ({@code receiveInFlightBytesMax}, {@code readsInFlightMax}; a pool
 * of its own, separate from the InventorySession's metadata credits, BND-1), connections, timeouts, the grant
 * safety margin, tracked grants and shared-arena mappings.
 *
 * <p>The source egress cap is a bytes-in-flight window (payload handed to the socket and not yet written out),
 * not a rate: it bounds the memory and socket backlog a source commits to READs at once, and a READ that does
 * not fit is refused ({@code SOURCE_EGRESS_LIMIT}) rather than queued.
 *
 * @param authorizeKeysMax blocks per Authorize request; more is {@code TOO_MANY_KEYS}
 * @param authorizeRequestBytesMax encoded Authorize/Release request bound, checked before parsing; more is {@code REQUEST_TOO_LARGE}
 * @param pinsPerRequesterMax pins one requester incarnation may hold at this source
 * @param pinnedBytesPerRequesterMax pinned payload bytes one requester incarnation may hold at this source
 * @param pinsTotalMax pins held for all requesters at this source
 * @param pinnedBytesTotalMax pinned payload bytes held for all requesters at this source
 * @param prefetchPinnedBytesTotalMax pinned bytes of {@code PREFETCH} grants, all requesters (speculation's share)
 * @param blockBytesMax the largest block this source grants and a requester admits; larger is {@code BLOCK_TOO_LARGE}
 * @param grantExpiryMs a grant ends this long after it was issued, on the source's monotonic clock
 * @param expirySweepIntervalMs how often the source ends expired grants and releases their pins
 * @param sourceEgressInFlightBytesMax payload bytes a source has handed to data connections and not yet written out
 * @param receiveInFlightBytesMax requester receive window: bytes of admitted READs not yet physically terminated
 * @param readsInFlightMax requester READs admitted and not yet physically terminated
 * @param connectionsPerSourceMax requester TCP data connections to one source (idle ones included)
 * @param readsPerConnectionMax requester READs pipelined on one data connection (all of one grant; 1 = one READ
 *     at a time)
 * @param connectTimeoutMs requester TCP connect timeout
 * @param authorizeTimeoutMs requester deadline of one Authorize or Release call
 * @param grantSafetyMarginMs the requester treats a grant as ended this long before its expiry (measured from
 *     before the Authorize call was sent, so its deadline is never later than the source's)
 * @param grantsTrackedMax grants a requester tracks (for release ordering) at once
 * @param sharedArenasMappedMax source arenas a requester keeps mapped read-only at once
 * @param sharedMemoryChunkBytes a shared-memory READ copies and checksums this much at a time, checking its
 *     deadline and cancellation between chunks
 * @param sourceEventLoopThreads event loops of a source's own data-plane group (data listener sends, expiry
 *     sweep), apart from the gRPC and HTTP event loops so that bulk payload never delays them
 * @param requesterEventLoopThreads event loops of a requester's own data-plane group (its data connections)
 * @param dataConnectionsMax source: data connections open at once on the data listener; one more is closed at
 *     once (counted, {@code DataConnectionRefusal.CONNECTIONS_MAX})
 * @param dataConnectionsPerAddressMax source: data connections open at once from one peer IP address; at least one
 *     requester's pool ({@code connectionsPerSourceMax}), at most {@code dataConnectionsMax}
 * @param dataHeaderTimeoutMs source: a READ request frame must arrive in full this long after its first byte, else
 *     the connection is closed (counted, {@code DataConnectionTimeout.HEADER})
 * @param dataIdleTimeoutMs source: a data connection with neither input nor output progress this long is closed
 *     (counted, {@code DataConnectionTimeout.IDLE})
 * @param dataReadsQueuedPerConnectionMax source: READs of one data connection decoded and not yet answered (their
 *     answer not yet written to the socket); at the bound the listener stops reading that socket until answers
 *     drain (counted, {@code DataReadPause.READS_QUEUED_MAX}); at least {@code readsPerConnectionMax}
 * @param dataChannelAuthorize requester: ask a source incarnation's Authorizes as AUTHORIZE frames on a data
 *     connection once its first gRPC grant named its data endpoint (issue 37 item 5; no gRPC call per route); false:
 *     every Authorize over gRPC
 */
public record TransferConfig(
        int authorizeKeysMax,
        int authorizeRequestBytesMax,
        int pinsPerRequesterMax,
        long pinnedBytesPerRequesterMax,
        int pinsTotalMax,
        long pinnedBytesTotalMax,
        long prefetchPinnedBytesTotalMax,
        long blockBytesMax,
        long grantExpiryMs,
        long expirySweepIntervalMs,
        long sourceEgressInFlightBytesMax,
        long receiveInFlightBytesMax,
        int readsInFlightMax,
        int connectionsPerSourceMax,
        int readsPerConnectionMax,
        long connectTimeoutMs,
        long authorizeTimeoutMs,
        long grantSafetyMarginMs,
        int grantsTrackedMax,
        int sharedArenasMappedMax,
        int sharedMemoryChunkBytes,
        int sourceEventLoopThreads,
        int requesterEventLoopThreads,
        int dataConnectionsMax,
        int dataConnectionsPerAddressMax,
        long dataHeaderTimeoutMs,
        long dataIdleTimeoutMs,
        int dataReadsQueuedPerConnectionMax,
        boolean dataChannelAuthorize) {

    /** Default: 128 blocks per Authorize, the candidate bound of a lookup (DESIGN §9). */
    public static final int DEFAULT_AUTHORIZE_KEYS_MAX = 128;
    /** Default: 64 KiB encoded request (128 largest block refs are about 44 KiB). */
    public static final int DEFAULT_AUTHORIZE_REQUEST_BYTES_MAX = 64 << 10;
    /** Default: 1,024 pins per requester. */
    public static final int DEFAULT_PINS_PER_REQUESTER_MAX = 1024;
    /** Default: 1 GiB pinned per requester. */
    public static final long DEFAULT_PINNED_BYTES_PER_REQUESTER_MAX = 1L << 30;
    /** Default: 8,192 pins in total. */
    public static final int DEFAULT_PINS_TOTAL_MAX = 8192;
    /** Default: 4 GiB pinned in total. */
    public static final long DEFAULT_PINNED_BYTES_TOTAL_MAX = 4L << 30;
    /** Default: 256 MiB pinned for prefetch grants (1/16 of the total). */
    public static final long DEFAULT_PREFETCH_PINNED_BYTES_TOTAL_MAX = 256L << 20;
    /** Default: 64 MiB per block. */
    public static final long DEFAULT_BLOCK_BYTES_MAX = 64L << 20;
    /** Default: a grant lives 10 s. */
    public static final long DEFAULT_GRANT_EXPIRY_MS = 10_000;
    /** Default: expired grants are swept every 100 ms. */
    public static final long DEFAULT_EXPIRY_SWEEP_INTERVAL_MS = 100;
    /** Default: 256 MiB of payload in flight per source. */
    public static final long DEFAULT_SOURCE_EGRESS_IN_FLIGHT_BYTES_MAX = 256L << 20;
    /** Default: 256 MiB receive window per requester. */
    public static final long DEFAULT_RECEIVE_IN_FLIGHT_BYTES_MAX = 256L << 20;
    /** Default: 64 READs in flight per requester. */
    public static final int DEFAULT_READS_IN_FLIGHT_MAX = 64;
    /** Default: 16 data connections per source. */
    public static final int DEFAULT_CONNECTIONS_PER_SOURCE_MAX = 16;
    /** Default: 4 READs pipelined per data connection (a restore route keeps 4 in flight: one connection). */
    public static final int DEFAULT_READS_PER_CONNECTION_MAX = 4;
    /** Default: 2 s connect timeout. */
    public static final long DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
    /** Default: 5 s per Authorize or Release call. */
    public static final long DEFAULT_AUTHORIZE_TIMEOUT_MS = 5_000;
    /** Default: 1 s safety margin before a grant's expiry. */
    public static final long DEFAULT_GRANT_SAFETY_MARGIN_MS = 1_000;
    /** Default: 4,096 tracked grants. */
    public static final int DEFAULT_GRANTS_TRACKED_MAX = 4096;
    /** Default: 16 mapped source arenas. */
    public static final int DEFAULT_SHARED_ARENAS_MAPPED_MAX = 16;
    /** Default: 1 MiB shared-memory copy chunk (stays in the L2/L3 cache for the checksum). */
    public static final int DEFAULT_SHARED_MEMORY_CHUNK_BYTES = 1 << 20;
    /** Default: 2 source data-plane event loops (sends are zero-copy: the kernel does the byte work). */
    public static final int DEFAULT_SOURCE_EVENT_LOOP_THREADS = 2;
    /** Default: 2 requester data-plane event loops. */
    public static final int DEFAULT_REQUESTER_EVENT_LOOP_THREADS = 2;
    /** Default: 1,024 data connections per source listener. */
    public static final int DEFAULT_DATA_CONNECTIONS_MAX = 1024;
    /** Default: 64 data connections per peer address (four requesters' pools of 16 behind one address). */
    public static final int DEFAULT_DATA_CONNECTIONS_PER_ADDRESS_MAX = 64;
    /** Default: a READ frame must arrive in full within 5 s of its first byte. */
    public static final long DEFAULT_DATA_HEADER_TIMEOUT_MS = 5_000;
    /** Default: a data connection without progress for 120 s is closed. */
    public static final long DEFAULT_DATA_IDLE_TIMEOUT_MS = 120_000;
    /** Default: 64 READs decoded and unanswered per data connection (the largest requester pipelining depth). */
    public static final int DEFAULT_DATA_READS_QUEUED_PER_CONNECTION_MAX = 64;
    /** Default: Authorizes on the data channel once the endpoint is known (issue 37 item 5). */
    public static final boolean DEFAULT_DATA_CHANNEL_AUTHORIZE = true;
    /** Upper bound of either event loop count. */
    public static final int EVENT_LOOP_THREADS_MAX = 64;

    public TransferConfig {
        atLeast("blockBytesMax", blockBytesMax, "1", 1); // first: other bounds are checked against it
        atMost("blockBytesMax", blockBytesMax, "Integer.MAX_VALUE (one buffer per block)", Integer.MAX_VALUE);
        atLeast("authorizeKeysMax", authorizeKeysMax, "1", 1);
        atLeast("authorizeRequestBytesMax", authorizeRequestBytesMax, "1024", 1024);
        atLeast("pinsPerRequesterMax", pinsPerRequesterMax, "1", 1);
        atLeast("pinnedBytesPerRequesterMax", pinnedBytesPerRequesterMax, "blockBytesMax", blockBytesMax);
        atLeast("pinsTotalMax", pinsTotalMax, "pinsPerRequesterMax", pinsPerRequesterMax);
        atLeast("pinnedBytesTotalMax", pinnedBytesTotalMax, "pinnedBytesPerRequesterMax", pinnedBytesPerRequesterMax);
        atLeast("prefetchPinnedBytesTotalMax", prefetchPinnedBytesTotalMax, "0", 0);
        atMost("prefetchPinnedBytesTotalMax", prefetchPinnedBytesTotalMax, "pinnedBytesTotalMax", pinnedBytesTotalMax);
        atLeast("grantExpiryMs", grantExpiryMs, "grantSafetyMarginMs + 1", grantSafetyMarginMs + 1);
        atLeast("expirySweepIntervalMs", expirySweepIntervalMs, "1", 1);
        atMost("expirySweepIntervalMs", expirySweepIntervalMs, "grantExpiryMs", grantExpiryMs);
        atLeast("sourceEgressInFlightBytesMax", sourceEgressInFlightBytesMax, "blockBytesMax", blockBytesMax);
        atLeast("receiveInFlightBytesMax", receiveInFlightBytesMax, "blockBytesMax", blockBytesMax);
        atLeast("readsInFlightMax", readsInFlightMax, "1", 1);
        atLeast("connectionsPerSourceMax", connectionsPerSourceMax, "1", 1);
        atMost("connectionsPerSourceMax", connectionsPerSourceMax, "readsInFlightMax", readsInFlightMax);
        atLeast("readsPerConnectionMax", readsPerConnectionMax, "1", 1);
        atMost("readsPerConnectionMax", readsPerConnectionMax, "readsInFlightMax", readsInFlightMax);
        atLeast("connectTimeoutMs", connectTimeoutMs, "1", 1);
        atLeast("authorizeTimeoutMs", authorizeTimeoutMs, "1", 1);
        atLeast("grantSafetyMarginMs", grantSafetyMarginMs, "0", 0);
        atLeast("grantsTrackedMax", grantsTrackedMax, "1", 1);
        atLeast("sharedArenasMappedMax", sharedArenasMappedMax, "1", 1);
        atLeast("sharedMemoryChunkBytes", sharedMemoryChunkBytes, "4096", 4096);
        atLeast("sourceEventLoopThreads", sourceEventLoopThreads, "1", 1);
        atMost("sourceEventLoopThreads", sourceEventLoopThreads, "EVENT_LOOP_THREADS_MAX", EVENT_LOOP_THREADS_MAX);
        atLeast("requesterEventLoopThreads", requesterEventLoopThreads, "1", 1);
        atMost("requesterEventLoopThreads", requesterEventLoopThreads, "EVENT_LOOP_THREADS_MAX", EVENT_LOOP_THREADS_MAX);
        atLeast("dataConnectionsMax", dataConnectionsMax, "1", 1);
        atLeast("dataConnectionsPerAddressMax", dataConnectionsPerAddressMax, "connectionsPerSourceMax",
                connectionsPerSourceMax);
        atMost("dataConnectionsPerAddressMax", dataConnectionsPerAddressMax, "dataConnectionsMax", dataConnectionsMax);
        atLeast("dataHeaderTimeoutMs", dataHeaderTimeoutMs, "1", 1);
        atLeast("dataIdleTimeoutMs", dataIdleTimeoutMs, "1", 1);
        atLeast("dataReadsQueuedPerConnectionMax", dataReadsQueuedPerConnectionMax, "readsPerConnectionMax",
                readsPerConnectionMax);
    }

    /** The defaults above. */
    public static TransferConfig defaults() {
        return new TransferConfig(DEFAULT_AUTHORIZE_KEYS_MAX, DEFAULT_AUTHORIZE_REQUEST_BYTES_MAX,
                DEFAULT_PINS_PER_REQUESTER_MAX, DEFAULT_PINNED_BYTES_PER_REQUESTER_MAX, DEFAULT_PINS_TOTAL_MAX,
                DEFAULT_PINNED_BYTES_TOTAL_MAX, DEFAULT_PREFETCH_PINNED_BYTES_TOTAL_MAX, DEFAULT_BLOCK_BYTES_MAX,
                DEFAULT_GRANT_EXPIRY_MS, DEFAULT_EXPIRY_SWEEP_INTERVAL_MS, DEFAULT_SOURCE_EGRESS_IN_FLIGHT_BYTES_MAX,
                DEFAULT_RECEIVE_IN_FLIGHT_BYTES_MAX, DEFAULT_READS_IN_FLIGHT_MAX, DEFAULT_CONNECTIONS_PER_SOURCE_MAX,
                DEFAULT_READS_PER_CONNECTION_MAX, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_AUTHORIZE_TIMEOUT_MS,
                DEFAULT_GRANT_SAFETY_MARGIN_MS, DEFAULT_GRANTS_TRACKED_MAX, DEFAULT_SHARED_ARENAS_MAPPED_MAX,
                DEFAULT_SHARED_MEMORY_CHUNK_BYTES, DEFAULT_SOURCE_EVENT_LOOP_THREADS,
                DEFAULT_REQUESTER_EVENT_LOOP_THREADS, DEFAULT_DATA_CONNECTIONS_MAX,
                DEFAULT_DATA_CONNECTIONS_PER_ADDRESS_MAX, DEFAULT_DATA_HEADER_TIMEOUT_MS, DEFAULT_DATA_IDLE_TIMEOUT_MS,
                DEFAULT_DATA_READS_QUEUED_PER_CONNECTION_MAX, DEFAULT_DATA_CHANNEL_AUTHORIZE);
    }

    /** This configuration with other pin bounds. */
    public TransferConfig withPins(int perRequesterMax, long bytesPerRequesterMax, int totalMax, long bytesTotalMax,
            long prefetchBytesTotalMax) {
        return new TransferConfig(authorizeKeysMax, authorizeRequestBytesMax, perRequesterMax, bytesPerRequesterMax,
                totalMax, bytesTotalMax, prefetchBytesTotalMax, blockBytesMax, grantExpiryMs, expirySweepIntervalMs,
                sourceEgressInFlightBytesMax, receiveInFlightBytesMax, readsInFlightMax, connectionsPerSourceMax,
                readsPerConnectionMax, connectTimeoutMs, authorizeTimeoutMs, grantSafetyMarginMs, grantsTrackedMax,
                sharedArenasMappedMax, sharedMemoryChunkBytes, sourceEventLoopThreads, requesterEventLoopThreads,
                dataConnectionsMax, dataConnectionsPerAddressMax, dataHeaderTimeoutMs, dataIdleTimeoutMs,
                dataReadsQueuedPerConnectionMax, dataChannelAuthorize);
    }

    /**
     * This configuration with another block bound, egress cap and receive window; the pipelining depth is capped
     * at {@code readsMax}; the data listener's connection bounds are raised to fit {@code connectionsMax}.
     */
    public TransferConfig withWindows(long blockMax, long egressInFlightMax, long receiveInFlightMax, int readsMax,
            int connectionsMax) {
        return new TransferConfig(authorizeKeysMax, authorizeRequestBytesMax, pinsPerRequesterMax,
                pinnedBytesPerRequesterMax, pinsTotalMax, pinnedBytesTotalMax, prefetchPinnedBytesTotalMax, blockMax,
                grantExpiryMs, expirySweepIntervalMs, egressInFlightMax, receiveInFlightMax, readsMax, connectionsMax,
                Math.min(readsPerConnectionMax, readsMax), connectTimeoutMs, authorizeTimeoutMs, grantSafetyMarginMs,
                grantsTrackedMax, sharedArenasMappedMax, sharedMemoryChunkBytes, sourceEventLoopThreads,
                requesterEventLoopThreads,
                Math.max(dataConnectionsMax, connectionsMax), Math.max(dataConnectionsPerAddressMax, connectionsMax),
                dataHeaderTimeoutMs, dataIdleTimeoutMs, dataReadsQueuedPerConnectionMax, dataChannelAuthorize);
    }

    /** This configuration with other grant timing. */
    public TransferConfig withGrantTiming(long expiryMs, long sweepIntervalMs, long safetyMarginMs) {
        return new TransferConfig(authorizeKeysMax, authorizeRequestBytesMax, pinsPerRequesterMax,
                pinnedBytesPerRequesterMax, pinsTotalMax, pinnedBytesTotalMax, prefetchPinnedBytesTotalMax,
                blockBytesMax, expiryMs, sweepIntervalMs, sourceEgressInFlightBytesMax, receiveInFlightBytesMax,
                readsInFlightMax, connectionsPerSourceMax, readsPerConnectionMax, connectTimeoutMs,
                authorizeTimeoutMs, safetyMarginMs, grantsTrackedMax, sharedArenasMappedMax, sharedMemoryChunkBytes,
                sourceEventLoopThreads, requesterEventLoopThreads,
                dataConnectionsMax, dataConnectionsPerAddressMax, dataHeaderTimeoutMs, dataIdleTimeoutMs,
                dataReadsQueuedPerConnectionMax, dataChannelAuthorize);
    }

    /** This configuration with other request bounds. */
    public TransferConfig withRequestBounds(int keysMax, int requestBytesMax) {
        return new TransferConfig(keysMax, requestBytesMax, pinsPerRequesterMax, pinnedBytesPerRequesterMax,
                pinsTotalMax, pinnedBytesTotalMax, prefetchPinnedBytesTotalMax, blockBytesMax, grantExpiryMs,
                expirySweepIntervalMs, sourceEgressInFlightBytesMax, receiveInFlightBytesMax, readsInFlightMax,
                connectionsPerSourceMax, readsPerConnectionMax, connectTimeoutMs, authorizeTimeoutMs,
                grantSafetyMarginMs, grantsTrackedMax, sharedArenasMappedMax, sharedMemoryChunkBytes,
                sourceEventLoopThreads, requesterEventLoopThreads,
                dataConnectionsMax, dataConnectionsPerAddressMax, dataHeaderTimeoutMs, dataIdleTimeoutMs,
                dataReadsQueuedPerConnectionMax, dataChannelAuthorize);
    }

    /**
     * This configuration with another pipelining depth of the requester's data connections (the source's
     * {@code dataReadsQueuedPerConnectionMax} is raised to fit it).
     */
    public TransferConfig withReadsPerConnection(int readsPerConnection) {
        return new TransferConfig(authorizeKeysMax, authorizeRequestBytesMax, pinsPerRequesterMax,
                pinnedBytesPerRequesterMax, pinsTotalMax, pinnedBytesTotalMax, prefetchPinnedBytesTotalMax,
                blockBytesMax, grantExpiryMs, expirySweepIntervalMs, sourceEgressInFlightBytesMax,
                receiveInFlightBytesMax, readsInFlightMax, connectionsPerSourceMax, readsPerConnection,
                connectTimeoutMs, authorizeTimeoutMs, grantSafetyMarginMs, grantsTrackedMax, sharedArenasMappedMax,
                sharedMemoryChunkBytes, sourceEventLoopThreads, requesterEventLoopThreads,
                dataConnectionsMax, dataConnectionsPerAddressMax, dataHeaderTimeoutMs, dataIdleTimeoutMs,
                Math.max(dataReadsQueuedPerConnectionMax, readsPerConnection), dataChannelAuthorize);
    }

    /** This configuration with other data-plane event loop counts. */
    public TransferConfig withEventLoops(int sourceThreads, int requesterThreads) {
        return new TransferConfig(authorizeKeysMax, authorizeRequestBytesMax, pinsPerRequesterMax,
                pinnedBytesPerRequesterMax, pinsTotalMax, pinnedBytesTotalMax, prefetchPinnedBytesTotalMax,
                blockBytesMax, grantExpiryMs, expirySweepIntervalMs, sourceEgressInFlightBytesMax,
                receiveInFlightBytesMax, readsInFlightMax, connectionsPerSourceMax, readsPerConnectionMax,
                connectTimeoutMs, authorizeTimeoutMs, grantSafetyMarginMs, grantsTrackedMax, sharedArenasMappedMax,
                sharedMemoryChunkBytes, sourceThreads, requesterThreads, dataConnectionsMax,
                dataConnectionsPerAddressMax, dataHeaderTimeoutMs, dataIdleTimeoutMs, dataReadsQueuedPerConnectionMax, dataChannelAuthorize);
    }

    /** This configuration with other data listener bounds (source side). */
    public TransferConfig withDataListener(int connectionsMax, int connectionsPerAddressMax, long headerTimeoutMs,
            long idleTimeoutMs, int readsQueuedPerConnectionMax) {
        return new TransferConfig(authorizeKeysMax, authorizeRequestBytesMax, pinsPerRequesterMax,
                pinnedBytesPerRequesterMax, pinsTotalMax, pinnedBytesTotalMax, prefetchPinnedBytesTotalMax,
                blockBytesMax, grantExpiryMs, expirySweepIntervalMs, sourceEgressInFlightBytesMax,
                receiveInFlightBytesMax, readsInFlightMax, connectionsPerSourceMax, readsPerConnectionMax,
                connectTimeoutMs, authorizeTimeoutMs, grantSafetyMarginMs, grantsTrackedMax, sharedArenasMappedMax,
                sharedMemoryChunkBytes, sourceEventLoopThreads, requesterEventLoopThreads, connectionsMax,
                connectionsPerAddressMax, headerTimeoutMs, idleTimeoutMs, readsQueuedPerConnectionMax, dataChannelAuthorize);
    }

    /** This configuration with Authorizes on the data channel on ({@code true}) or off (requester side). */
    public TransferConfig withDataChannelAuthorize(boolean on) {
        return new TransferConfig(authorizeKeysMax, authorizeRequestBytesMax, pinsPerRequesterMax,
                pinnedBytesPerRequesterMax, pinsTotalMax, pinnedBytesTotalMax, prefetchPinnedBytesTotalMax,
                blockBytesMax, grantExpiryMs, expirySweepIntervalMs, sourceEgressInFlightBytesMax,
                receiveInFlightBytesMax, readsInFlightMax, connectionsPerSourceMax, readsPerConnectionMax,
                connectTimeoutMs, authorizeTimeoutMs, grantSafetyMarginMs, grantsTrackedMax, sharedArenasMappedMax,
                sharedMemoryChunkBytes, sourceEventLoopThreads, requesterEventLoopThreads, dataConnectionsMax,
                dataConnectionsPerAddressMax, dataHeaderTimeoutMs, dataIdleTimeoutMs, dataReadsQueuedPerConnectionMax, on);
    }

    private static void atLeast(String name, long value, String boundName, long bound) {
        if (value < bound) {
            throw new IllegalArgumentException(name + " (" + value + ") must be >= " + boundName + " (" + bound + ")");
        }
    }

    private static void atMost(String name, long value, String boundName, long bound) {
        if (value > bound) {
            throw new IllegalArgumentException(name + " (" + value + ") must be <= " + boundName + " (" + bound + ")");
        }
    }
}
