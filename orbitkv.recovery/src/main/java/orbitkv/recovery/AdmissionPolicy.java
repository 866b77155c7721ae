package orbitkv.recovery;

import java.util.Map;
import java.util.Objects;

/**
 * Settings of the node-local S6 admission owner ({@link NodeAdmission}; ROUTE-11, BND-1). The compact constructor is
 * the one place that checks them and names both sides of a broken relation. The Manager maps its
 * {@code --admission-*} options onto it.
 *
 * @param lanes the admitted NIC lanes and their limits; at least one, at most {@link #LANES_MAX}
 * @param leaseBatchBytesMax the largest lease one request may get (credits are leased in bounded batches); each
 *     lane's usable window and pacer burst hold at least one batch
 * @param leaseTtlNanos a lease's life: after it the lease can no longer be trusted to be unspent, its outstanding
 *     bytes stay charged (quarantined) until transport progress or termination evidence
 * @param pendingMax requests waiting for credits at once (the scheduling queue)
 * @param agingNanos a request waiting this long is served ahead of every younger one (no starvation)
 * @param submittersMax registered submitters at once
 * @param leasesMax outstanding leases at once
 */
public record AdmissionPolicy(Map<NicLane, LaneLimits> lanes, long leaseBatchBytesMax, long leaseTtlNanos,
        int pendingMax, long agingNanos, int submittersMax, int leasesMax) {
    /** 64 NIC lanes (32 interfaces, both directions). */
    public static final int LANES_MAX = 64;
    /** 16 MiB. */
    public static final long LEASE_BATCH_BYTES_MAX_DEFAULT = 16L << 20;
    /** 30 s. */
    public static final long LEASE_TTL_NANOS_DEFAULT = 30_000_000_000L;
    /** 1,024 waiting requests. */
    public static final int PENDING_MAX_DEFAULT = 1_024;
    /** 200 ms. */
    public static final long AGING_NANOS_DEFAULT = 200_000_000L;
    /** 256 submitters. */
    public static final int SUBMITTERS_MAX_DEFAULT = 256;
    /** 4,096 leases. */
    public static final int LEASES_MAX_DEFAULT = 4_096;

    /**
     * Limits of one NIC lane.
     *
     * @param windowBytesMax bytes in flight at once on the lane, OrbitKV's and the reserve together
     * @param paceBytesPerSecond the lane's rate; 0 leaves the lane unpaced (window only)
     * @param reservePercent 0..90: the part of the window and of the rate kept for traffic OrbitKV does not
     *     control (engine collectives, NCCL); the usable window and rate are the rest
     */
    public record LaneLimits(long windowBytesMax, long paceBytesPerSecond, int reservePercent) {
        public LaneLimits {
            if (windowBytesMax < 1) {
                throw new IllegalArgumentException("lane window must be >= 1 byte, got " + windowBytesMax);
            }
            if (paceBytesPerSecond < 0) {
                throw new IllegalArgumentException("lane pace must be >= 0 bytes/s, got " + paceBytesPerSecond);
            }
            if (reservePercent < 0 || reservePercent > 90) {
                throw new IllegalArgumentException("reserve must be 0..90 %, got " + reservePercent);
            }
        }

        /** The window OrbitKV's submitters may hold: the window minus the reserve. */
        public long usableBytes() {
            return windowBytesMax - Math.ceilDiv(windowBytesMax * reservePercent, 100L);
        }

        /** The rate OrbitKV's submitters may use (0: unpaced). */
        public long usablePaceBytesPerSecond() {
            return paceBytesPerSecond - Math.ceilDiv(paceBytesPerSecond * reservePercent, 100L);
        }
    }

    public AdmissionPolicy {
        Objects.requireNonNull(lanes, "lanes");
        if (lanes.isEmpty() || lanes.size() > LANES_MAX) {
            throw new IllegalArgumentException("admission needs 1.." + LANES_MAX + " NIC lanes, got " + lanes.size());
        }
        lanes = Map.copyOf(lanes);
        positive("lease batch bytes", leaseBatchBytesMax);
        positive("lease TTL nanos", leaseTtlNanos);
        positive("pending requests", pendingMax);
        positive("aging nanos", agingNanos);
        positive("submitters", submittersMax);
        positive("leases", leasesMax);
        for (Map.Entry<NicLane, LaneLimits> e : lanes.entrySet()) {
            LaneLimits l = e.getValue();
            if (l.usableBytes() < leaseBatchBytesMax) {
                throw new IllegalArgumentException("lane " + e.getKey() + ": usable window " + l.usableBytes()
                        + " bytes (window " + l.windowBytesMax() + " minus " + l.reservePercent()
                        + " % reserve) must hold one lease batch of " + leaseBatchBytesMax + " bytes");
            }
            if (l.paceBytesPerSecond() > 0 && l.usablePaceBytesPerSecond() < 1) {
                throw new IllegalArgumentException("lane " + e.getKey() + ": pace " + l.paceBytesPerSecond()
                        + " bytes/s leaves nothing beside the " + l.reservePercent() + " % reserve");
            }
        }
    }

    private static void positive(String what, long v) {
        if (v < 1) {
            throw new IllegalArgumentException(what + " must be >= 1, got " + v);
        }
    }
}
