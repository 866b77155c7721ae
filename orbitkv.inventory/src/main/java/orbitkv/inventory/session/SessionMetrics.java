package orbitkv.inventory.session;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Metric;
import java.util.List;

/**
 * Session metrics (DIAG-3) with bounded label sets: {@code side} (source|requester), {@code kind} (the
 * seven frame bodies and the six requester bodies), {@code cause} (the 27 ErrorCause names or the 7
 * ResetCause names), {@code measure} (encoded|decoded), {@code part} (pages|replay). Never a per-key or
 * per-peer label.
 */
public final class SessionMetrics implements orbitkv.inventory.SessionMetricSet {
    final Counter mutations = Counter.builder().name("orbitkv_session_mutations_total")
            .help("Journal positions covered (original) vs records sent (coalesced) by deltas and replay")
            .labelNames("kind").build();
    final Counter frames = Counter.builder().name("orbitkv_session_frames_total")
            .help("Frames sent or received, by side and body kind").labelNames("side", "direction", "kind").build();
    final Counter bytes = Counter.builder().name("orbitkv_session_bytes_total")
            .help("Frame bytes by side and measure (encoded on the wire, decoded records)")
            .labelNames("side", "measure").build();
    final Counter snapshotBytes = Counter.builder().name("orbitkv_session_snapshot_bytes_total")
            .help("Encoded bytes of snapshot pages and of bootstrap replay").labelNames("part").build();
    final Counter rejections = Counter.builder().name("orbitkv_session_rejections_total")
            .help("Sessions closed or frames refused, by side and wire ErrorCause").labelNames("side", "cause").build();
    final Counter resets = Counter.builder().name("orbitkv_session_resets_total")
            .help("Requester staging resets by ResetCause").labelNames("cause").build();
    final Counter duplicateAcks = Counter.builder().name("orbitkv_session_duplicate_acks_total")
            .help("ACKs at or below the acknowledged frame (ignored, SES-13)").build();
    final Counter sessionMismatchDrops = Counter.builder().name("orbitkv_session_mismatch_drops_total")
            .help("Frames carrying another session id, dropped (SES-6)").labelNames("side").build();
    final Histogram bootstrapSeconds = Histogram.builder().name("orbitkv_session_bootstrap_seconds")
            .help("Requester: SnapshotBegin receipt to installed view").build();
    final Histogram ackRoundTripSeconds = Histogram.builder().name("orbitkv_session_ack_round_trip_seconds")
            .help("Source: data frame handed to transport until its ACK returned (transport and apply lag, "
                    + "apart from the intentional coalescing wait)").build();
    final Gauge peakOutstandingCreditBytes = Gauge.builder().name("orbitkv_session_peak_outstanding_credit_bytes")
            .help("Highest outstanding credit of any session of this process").build();

    /** Created only through {@link orbitkv.inventory.SessionMetricSet#create()}. */
    public SessionMetrics() {}

    @Override
    public List<Metric> metrics() {
        return List.of(mutations, frames, bytes, snapshotBytes, rejections, resets, duplicateAcks, sessionMismatchDrops,
                bootstrapSeconds, ackRoundTripSeconds, peakOutstandingCreditBytes);
    }

    synchronized void peakCredit(long bytes) {
        if (bytes > peakOutstandingCreditBytes.get()) {
            peakOutstandingCreditBytes.set(bytes);
        }
    }
}
