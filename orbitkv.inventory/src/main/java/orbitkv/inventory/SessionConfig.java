package orbitkv.inventory;

import java.util.Set;
import orbitkv.membership.NodeId;
import orbitkv.membership.RetryBackoff;

/**
 * Bounds and timing of the InventorySession v4, both ends (DESIGN §5, §9). Every setting carries its
 * unit in its name; construction validates in one place and names both sides of a broken relation (BND-6).
 *
 * @param receiveWindowBytes credit window per session: outstanding unacknowledged data-frame bytes (SES-13)
 * @param windowFramesMax outstanding unacknowledged data frames per session (the ledger's count bound)
 * @param openEncodedBytesMax encoded {@code Open} bound; also the bound of every requester frame (SES-10)
 * @param frameEncodedBytesMax encoded source frame bound (SES-10)
 * @param frameDecodedBytesMax decoded source frame bound (records expanded, SES-10)
 * @param ackIntervalMs the requester ACKs pending progress at least this often (DELTA-12)
 * @param livenessIntervalMs the source sends liveness after this long without any frame (DELTA-13)
 * @param sessionsPerRequesterMax sessions a requester opens; members beyond are reported, never skipped silently (BND-3)
 * @param sessionsPerSourceMax sessions a source serves at once; beyond: {@code SESSION_LIMIT}
 * @param reconnectBackoffMinMs first reconnect delay of a requester session
 * @param reconnectBackoffMaxMs cap of the exponential reconnect delay
 * @param snapshotRetryBackoffMinMs first delay before a new S0 after a trimmed snapshot (SNAP-4)
 * @param snapshotRetryBackoffMaxMs cap of the snapshot retry delay (SNAP-4, SNAP-13)
 * @param replayIntervalsPerRead coalesced intervals fetched per journal read (encoding batch)
 * @param committedViewsMax view ids a source remembers as committed, for resume (SNAP-8)
 * @param sendStepsConcurrentMax source pump steps of one source that run at once; the rest wait by priority (ROUTE-10)
 * @param sendPriority false: the source's send scheduling ignores priority (first come first served, ROUTE-10)
 * @param priorityRequesters requester nodes whose whole subscriptions the source favours (ROUTE-10); at most
 *     {@code sessionsPerSourceMax} entries
 */
public record SessionConfig(
        long receiveWindowBytes,
        int windowFramesMax,
        int openEncodedBytesMax,
        int frameEncodedBytesMax,
        int frameDecodedBytesMax,
        long ackIntervalMs,
        long livenessIntervalMs,
        int sessionsPerRequesterMax,
        int sessionsPerSourceMax,
        long reconnectBackoffMinMs,
        long reconnectBackoffMaxMs,
        long snapshotRetryBackoffMinMs,
        long snapshotRetryBackoffMaxMs,
        int replayIntervalsPerRead,
        int committedViewsMax,
        int sendStepsConcurrentMax,
        boolean sendPriority,
        Set<NodeId> priorityRequesters) {

    /** Default: 8 MiB receive window (DESIGN §9). */
    public static final long DEFAULT_RECEIVE_WINDOW_BYTES = 8L << 20;
    /** Default: 16,384 outstanding frames. */
    public static final int DEFAULT_WINDOW_FRAMES_MAX = 16_384;
    /** Default: 64 KiB encoded Open (DESIGN §9). */
    public static final int DEFAULT_OPEN_ENCODED_BYTES_MAX = 64 << 10;
    /** Default: 1 MiB encoded frame (DESIGN §9). */
    public static final int DEFAULT_FRAME_ENCODED_BYTES_MAX = 1 << 20;
    /** Default: 4 MiB decoded frame (DESIGN §9). */
    public static final int DEFAULT_FRAME_DECODED_BYTES_MAX = 4 << 20;
    /** Default: 10 ms ACK cadence (DESIGN §9). */
    public static final long DEFAULT_ACK_INTERVAL_MS = 10;
    /** Default: 1 s idle liveness (DESIGN §9). */
    public static final long DEFAULT_LIVENESS_INTERVAL_MS = 1000;
    /** Default: 128 peer sessions per requester (DESIGN §9). */
    public static final int DEFAULT_SESSIONS_PER_REQUESTER_MAX = 128;
    /** Default: 1,024 sessions served per source. */
    public static final int DEFAULT_SESSIONS_PER_SOURCE_MAX = 1024;
    /** Default reconnect backoff: 50 ms doubling to 5 s. */
    public static final long DEFAULT_RECONNECT_BACKOFF_MIN_MS = 50;
    public static final long DEFAULT_RECONNECT_BACKOFF_MAX_MS = 5000;
    /** Default snapshot retry backoff: 20 ms doubling to 2 s. */
    public static final long DEFAULT_SNAPSHOT_RETRY_BACKOFF_MIN_MS = 20;
    public static final long DEFAULT_SNAPSHOT_RETRY_BACKOFF_MAX_MS = 2000;
    /** Default: 16 intervals per journal read. */
    public static final int DEFAULT_REPLAY_INTERVALS_PER_READ = 16;
    /** Default: 4,096 remembered committed view ids. */
    public static final int DEFAULT_COMMITTED_VIEWS_MAX = 4096;
    /** Default: 4 pump steps of one source at once (issue 39 item 5, ROUTE-10). */
    public static final int DEFAULT_SEND_STEPS_CONCURRENT_MAX = 4;

    /**
     * Smallest encoded frame bound a session accepts, on both ends and for the source it serves: every frame
     * a session sends must fit it (SES-10), so it must carry the fixed control frames (the widest SnapshotCommit
     * is 130 bytes) and one largest record alone in a page or a delta (255-byte namespace, 64-byte key, widest
     * integers: 409 and 398 bytes). {@code SessionFrameFloorTest} encodes each worst case against it.
     * Below it a snapshot could never commit, or a legal record could never be sent.
     */
    public static final int FRAME_ENCODED_BYTES_MIN = 512;

    public SessionConfig {
        atLeast("receiveWindowBytes", receiveWindowBytes, "frameEncodedBytesMax", frameEncodedBytesMax);
        atLeast("windowFramesMax", windowFramesMax, "1", 1);
        atLeast("openEncodedBytesMax", openEncodedBytesMax, "1024", 1024);
        atLeast("frameEncodedBytesMax", frameEncodedBytesMax, "SessionConfig.FRAME_ENCODED_BYTES_MIN",
                FRAME_ENCODED_BYTES_MIN);
        atLeast("frameDecodedBytesMax", frameDecodedBytesMax, "frameEncodedBytesMax", frameEncodedBytesMax);
        atLeast("ackIntervalMs", ackIntervalMs, "1", 1);
        atLeast("livenessIntervalMs", livenessIntervalMs, "ackIntervalMs", ackIntervalMs);
        atLeast("sessionsPerRequesterMax", sessionsPerRequesterMax, "1", 1);
        atLeast("sessionsPerSourceMax", sessionsPerSourceMax, "1", 1);
        atLeast("reconnectBackoffMinMs", reconnectBackoffMinMs, "1", 1);
        atLeast("reconnectBackoffMaxMs", reconnectBackoffMaxMs, "reconnectBackoffMinMs", reconnectBackoffMinMs);
        atLeast("snapshotRetryBackoffMinMs", snapshotRetryBackoffMinMs, "1", 1);
        atLeast("snapshotRetryBackoffMaxMs", snapshotRetryBackoffMaxMs, "snapshotRetryBackoffMinMs", snapshotRetryBackoffMinMs);
        atLeast("replayIntervalsPerRead", replayIntervalsPerRead, "1", 1);
        atLeast("committedViewsMax", committedViewsMax, "1", 1);
        atLeast("sendStepsConcurrentMax", sendStepsConcurrentMax, "1", 1);
        priorityRequesters = Set.copyOf(priorityRequesters);
        atLeast("sessionsPerSourceMax", sessionsPerSourceMax, "priorityRequesters.size()", priorityRequesters.size());
    }

    /** The fields before issue 39 item 5; the source's send scheduling takes its defaults (priority on, none favoured). */
    public SessionConfig(long receiveWindowBytes, int windowFramesMax, int openEncodedBytesMax, int frameEncodedBytesMax,
            int frameDecodedBytesMax, long ackIntervalMs, long livenessIntervalMs, int sessionsPerRequesterMax,
            int sessionsPerSourceMax, long reconnectBackoffMinMs, long reconnectBackoffMaxMs, long snapshotRetryBackoffMinMs,
            long snapshotRetryBackoffMaxMs, int replayIntervalsPerRead, int committedViewsMax) {
        this(receiveWindowBytes, windowFramesMax, openEncodedBytesMax, frameEncodedBytesMax, frameDecodedBytesMax, ackIntervalMs,
                livenessIntervalMs, sessionsPerRequesterMax, sessionsPerSourceMax, reconnectBackoffMinMs, reconnectBackoffMaxMs,
                snapshotRetryBackoffMinMs, snapshotRetryBackoffMaxMs, replayIntervalsPerRead, committedViewsMax,
                DEFAULT_SEND_STEPS_CONCURRENT_MAX, true, Set.of());
    }

    /** The design's defaults (DESIGN §9). */
    public static SessionConfig defaults() {
        return new SessionConfig(DEFAULT_RECEIVE_WINDOW_BYTES, DEFAULT_WINDOW_FRAMES_MAX, DEFAULT_OPEN_ENCODED_BYTES_MAX,
                DEFAULT_FRAME_ENCODED_BYTES_MAX, DEFAULT_FRAME_DECODED_BYTES_MAX, DEFAULT_ACK_INTERVAL_MS,
                DEFAULT_LIVENESS_INTERVAL_MS, DEFAULT_SESSIONS_PER_REQUESTER_MAX, DEFAULT_SESSIONS_PER_SOURCE_MAX,
                DEFAULT_RECONNECT_BACKOFF_MIN_MS, DEFAULT_RECONNECT_BACKOFF_MAX_MS, DEFAULT_SNAPSHOT_RETRY_BACKOFF_MIN_MS,
                DEFAULT_SNAPSHOT_RETRY_BACKOFF_MAX_MS, DEFAULT_REPLAY_INTERVALS_PER_READ, DEFAULT_COMMITTED_VIEWS_MAX);
    }

    /** The ledger's count bound (issue 38: the simulator runs small windows so credit runs out often). */
    public SessionConfig withWindowFramesMax(int v) {
        return new SessionConfig(receiveWindowBytes, v, openEncodedBytesMax, frameEncodedBytesMax, frameDecodedBytesMax,
                ackIntervalMs, livenessIntervalMs, sessionsPerRequesterMax, sessionsPerSourceMax, reconnectBackoffMinMs,
                reconnectBackoffMaxMs, snapshotRetryBackoffMinMs, snapshotRetryBackoffMaxMs, replayIntervalsPerRead,
                committedViewsMax, sendStepsConcurrentMax, sendPriority, priorityRequesters);
    }

    public SessionConfig withReceiveWindowBytes(long v) {
        return new SessionConfig(v, windowFramesMax, openEncodedBytesMax, frameEncodedBytesMax, frameDecodedBytesMax,
                ackIntervalMs, livenessIntervalMs, sessionsPerRequesterMax, sessionsPerSourceMax, reconnectBackoffMinMs,
                reconnectBackoffMaxMs, snapshotRetryBackoffMinMs, snapshotRetryBackoffMaxMs, replayIntervalsPerRead,
                committedViewsMax, sendStepsConcurrentMax, sendPriority, priorityRequesters);
    }

    public SessionConfig withFrameBytesMax(int encodedMax, int decodedMax) {
        return new SessionConfig(receiveWindowBytes, windowFramesMax, openEncodedBytesMax, encodedMax, decodedMax,
                ackIntervalMs, livenessIntervalMs, sessionsPerRequesterMax, sessionsPerSourceMax, reconnectBackoffMinMs,
                reconnectBackoffMaxMs, snapshotRetryBackoffMinMs, snapshotRetryBackoffMaxMs, replayIntervalsPerRead,
                committedViewsMax, sendStepsConcurrentMax, sendPriority, priorityRequesters);
    }

    public SessionConfig withLivenessIntervalMs(long v) {
        return new SessionConfig(receiveWindowBytes, windowFramesMax, openEncodedBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, ackIntervalMs, v, sessionsPerRequesterMax, sessionsPerSourceMax, reconnectBackoffMinMs,
                reconnectBackoffMaxMs, snapshotRetryBackoffMinMs, snapshotRetryBackoffMaxMs, replayIntervalsPerRead,
                committedViewsMax, sendStepsConcurrentMax, sendPriority, priorityRequesters);
    }

    public SessionConfig withSessionLimits(int perRequesterMax, int perSourceMax) {
        return new SessionConfig(receiveWindowBytes, windowFramesMax, openEncodedBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, ackIntervalMs, livenessIntervalMs, perRequesterMax, perSourceMax, reconnectBackoffMinMs,
                reconnectBackoffMaxMs, snapshotRetryBackoffMinMs, snapshotRetryBackoffMaxMs, replayIntervalsPerRead,
                committedViewsMax, sendStepsConcurrentMax, sendPriority, priorityRequesters);
    }

    public SessionConfig withBackoffMs(long reconnectMin, long reconnectMax, long snapshotMin, long snapshotMax) {
        return new SessionConfig(receiveWindowBytes, windowFramesMax, openEncodedBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, ackIntervalMs, livenessIntervalMs, sessionsPerRequesterMax, sessionsPerSourceMax,
                reconnectMin, reconnectMax, snapshotMin, snapshotMax, replayIntervalsPerRead, committedViewsMax,
                sendStepsConcurrentMax, sendPriority, priorityRequesters);
    }

    /**
     * The source's send scheduling (ROUTE-10, issue 39 item 5): {@code stepsConcurrentMax} pump steps at once,
     * priority on or off, and the requester nodes whose whole subscriptions are favoured.
     */
    public SessionConfig withSendScheduling(int stepsConcurrentMax, boolean priority, Set<NodeId> favoured) {
        return new SessionConfig(receiveWindowBytes, windowFramesMax, openEncodedBytesMax, frameEncodedBytesMax,
                frameDecodedBytesMax, ackIntervalMs, livenessIntervalMs, sessionsPerRequesterMax, sessionsPerSourceMax,
                reconnectBackoffMinMs, reconnectBackoffMaxMs, snapshotRetryBackoffMinMs, snapshotRetryBackoffMaxMs,
                replayIntervalsPerRead, committedViewsMax, stepsConcurrentMax, priority, favoured);
    }

    /** The requester's reconnect pacing (equal jitter, so requesters that lost a source together spread out). */
    public RetryBackoff reconnectBackoff() {
        return new RetryBackoff(reconnectBackoffMinMs, reconnectBackoffMaxMs, RetryBackoff.Jitter.EQUAL);
    }

    /** The source's pacing of snapshot retries after a trimmed journal (SNAP-4), with equal jitter. */
    public RetryBackoff snapshotRetryBackoff() {
        return new RetryBackoff(snapshotRetryBackoffMinMs, snapshotRetryBackoffMaxMs, RetryBackoff.Jitter.EQUAL);
    }

    /**
     * Rejects a source whose frame bounds exceed this session's, or whose encoded bound is below what a session
     * must carry ({@link #FRAME_ENCODED_BYTES_MIN}: the source cuts deltas at its own bound, so a smaller one
     * would refuse a legal record, DELTA-3) (BND-6): both sides are named.
     */
    public void requireCompatible(InventoryConfig source) {
        if (source.frameEncodedBytesMax() < FRAME_ENCODED_BYTES_MIN) {
            throw new IllegalArgumentException("InventoryConfig.frameEncodedBytesMax (" + source.frameEncodedBytesMax()
                    + ") must be >= SessionConfig.FRAME_ENCODED_BYTES_MIN (" + FRAME_ENCODED_BYTES_MIN
                    + ") to be served by a session");
        }
        if (source.frameEncodedBytesMax() > frameEncodedBytesMax) {
            throw new IllegalArgumentException("InventoryConfig.frameEncodedBytesMax (" + source.frameEncodedBytesMax()
                    + ") must be <= SessionConfig.frameEncodedBytesMax (" + frameEncodedBytesMax + ")");
        }
        if (source.frameDecodedBytesMax() > frameDecodedBytesMax) {
            throw new IllegalArgumentException("InventoryConfig.frameDecodedBytesMax (" + source.frameDecodedBytesMax()
                    + ") must be <= SessionConfig.frameDecodedBytesMax (" + frameDecodedBytesMax + ")");
        }
    }

    private static void atLeast(String name, long value, String boundName, long bound) {
        if (value < bound) {
            throw new IllegalArgumentException(name + " (" + value + ") must be >= " + boundName + " (" + bound + ")");
        }
    }
}
