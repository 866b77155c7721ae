package orbitkv.recovery.admission;

import java.util.ArrayList;
import java.util.List;
import orbitkv.recovery.AdmissionPolicy.LaneLimits;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.NicLane;

/**
 * One NIC lane's bounded in-flight byte window and its pacer (a token bucket of one lease batch at the usable rate),
 * plus the requests waiting on it. Not thread-safe: {@link AdmissionOwner} guards it.
 */
final class Lane {
    final NicLane id;
    final LaneLimits limits;
    final long usable;
    final long rate;
    final long burst;
    final List<Entries.Pending> pending = new ArrayList<>();
    long charged;
    long quarantined;
    long peak;
    long grantedTotal;
    private double tokens;
    private long refilledAt;

    Lane(NicLane id, LaneLimits limits, long batchBytesMax, long now) {
        this.id = id;
        this.limits = limits;
        this.usable = limits.usableBytes();
        this.rate = limits.usablePaceBytesPerSecond();
        this.burst = batchBytesMax;
        this.tokens = batchBytesMax;
        this.refilledAt = now;
    }

    boolean fits(long bytes) {
        return bytes <= usable - charged;
    }

    /** Whether the pacer holds fewer than {@code bytes} tokens at {@code now}. */
    boolean paced(long bytes, long now) {
        if (rate == 0) {
            return false;
        }
        refill(now);
        return tokens < bytes;
    }

    /** When the pacer will hold {@code bytes} tokens (now if it does). */
    long tokensAt(long bytes, long now) {
        if (!paced(bytes, now)) {
            return now;
        }
        return refilledAt + (long) Math.ceil((bytes - tokens) * 1e9 / rate);
    }

    void charge(long bytes, long now) {
        if (rate > 0) {
            refill(now);
            tokens -= bytes;
        }
        charged += bytes;
        grantedTotal += bytes;
        peak = Math.max(peak, charged);
        assert charged <= usable : id + " charged " + charged + " of " + usable;
    }

    void discharge(long bytes, boolean fromQuarantine) {
        charged -= bytes;
        if (fromQuarantine) {
            quarantined -= bytes;
        }
        assert charged >= 0 && quarantined >= 0 && quarantined <= charged : id + " " + charged + "/" + quarantined;
    }

    private void refill(long now) {
        long elapsed = now - refilledAt;
        if (elapsed <= 0) {
            return;
        }
        refilledAt = now;
        tokens = Math.min(burst, tokens + elapsed * (double) rate / 1e9);
    }

    AdmissionStatus.LaneStatus status() {
        return new AdmissionStatus.LaneStatus(id, limits.windowBytesMax(), usable, charged, quarantined, peak, rate,
                pending.size(), grantedTotal);
    }
}
