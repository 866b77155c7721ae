package orbitkv.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.util.Map;
import java.util.function.Supplier;
import orbitkv.inventory.RequesterSessionMetrics;
import orbitkv.inventory.SecondsHistogram;
import orbitkv.inventory.SourceSessionMetrics;

/**
 * Adapts the inventory module's plain metric snapshots to Prometheus families (DIAG-2, DIAG-3), read at
 * scrape time; the inventory module itself depends on no metrics library. Each family is registered once and
 * carries both ends' data points, told apart by the bounded {@code side} label (source|requester); every
 * other label comes from a wire enum (frame body kind, ErrorCause) or {@code ResetCause}.
 */
final class SessionMetricFamilies {
    private SessionMetricFamilies() {}

    /** The intentional coalescing wait of this Manager's source (DIAG-3, apart from transport lag). */
    static void registerIntentionalWait(PrometheusRegistry registry, Supplier<SecondsHistogram> wait) {
        histogram(registry, "orbitkv_inventory_intentional_wait_seconds",
                "Intentional coalescing wait before a reader reads (not transport lag)", wait);
    }

    /** The session families of both ends. */
    static void register(PrometheusRegistry registry, Supplier<SourceSessionMetrics> source,
            Supplier<RequesterSessionMetrics> requester) {
        CounterWithCallback.builder().name("orbitkv_session_mutations")
                .help("Journal positions covered (original) vs records sent (coalesced) by deltas and replay")
                .labelNames("kind").callback(cb -> {
                    SourceSessionMetrics s = source.get();
                    cb.call(s.originalMutations(), "original");
                    cb.call(s.coalescedRecords(), "coalesced");
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_session_frames").help("Frames sent or received, by side and body kind")
                .labelNames("side", "direction", "kind").callback(cb -> {
                    SourceSessionMetrics s = source.get();
                    RequesterSessionMetrics r = requester.get();
                    counts(s.framesSent(), (kind, n) -> cb.call(n, "source", "sent", kind));
                    counts(s.framesReceived(), (kind, n) -> cb.call(n, "source", "received", kind));
                    counts(r.framesSent(), (kind, n) -> cb.call(n, "requester", "sent", kind));
                    counts(r.framesReceived(), (kind, n) -> cb.call(n, "requester", "received", kind));
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_session_bytes")
                .help("Frame bytes by side and measure (encoded on the wire, decoded records)")
                .labelNames("side", "measure").callback(cb -> {
                    RequesterSessionMetrics r = requester.get();
                    cb.call(source.get().encodedBytes(), "source", "encoded");
                    cb.call(r.encodedBytes(), "requester", "encoded");
                    cb.call(r.decodedBytes(), "requester", "decoded");
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_session_snapshot_bytes")
                .help("Encoded bytes of snapshot pages and of bootstrap replay").labelNames("part").callback(cb -> {
                    SourceSessionMetrics s = source.get();
                    cb.call(s.snapshotPageBytes(), "pages");
                    cb.call(s.snapshotReplayBytes(), "replay");
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_session_rejections")
                .help("Sessions closed or frames refused, by side and wire ErrorCause").labelNames("side", "cause").callback(cb -> {
                    counts(source.get().rejections(), (cause, n) -> cb.call(n, "source", cause));
                    counts(requester.get().rejections(), (cause, n) -> cb.call(n, "requester", cause));
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_session_resets").help("Requester staging resets by ResetCause")
                .labelNames("cause").callback(cb -> counts(requester.get().resets(), (cause, n) -> cb.call(n, cause)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_session_duplicate_acks")
                .help("ACKs at or below the acknowledged frame (ignored, SES-13)")
                .callback(cb -> cb.call(source.get().duplicateAcks())).register(registry);
        CounterWithCallback.builder().name("orbitkv_session_mismatch_drops")
                .help("Frames carrying another session id, dropped (SES-6)").labelNames("side").callback(cb -> {
                    cb.call(source.get().sessionMismatchDrops(), "source");
                    cb.call(requester.get().sessionMismatchDrops(), "requester");
                }).register(registry);
        histogram(registry, "orbitkv_session_bootstrap_seconds", "Requester: SnapshotBegin receipt to installed view",
                () -> requester.get().bootstrapSeconds());
        histogram(registry, "orbitkv_session_ack_round_trip_seconds",
                "Source: data frame handed to transport until its ACK returned (transport and apply lag, "
                        + "apart from the intentional coalescing wait)", () -> source.get().ackRoundTripSeconds());
        GaugeWithCallback.builder().name("orbitkv_session_peak_outstanding_credit_bytes")
                .help("Highest outstanding credit of any session of this process")
                .callback(cb -> cb.call(source.get().peakOutstandingCreditBytes())).register(registry);
    }

    private static <E extends Enum<E>> void counts(Map<E, Long> counts, java.util.function.BiConsumer<String, Long> out) {
        counts.forEach((k, n) -> out.accept(k.name(), n));
    }

    /** A classic histogram read from a snapshot at scrape time (the client has no histogram-with-callback). */
    private static void histogram(PrometheusRegistry registry, String name, String help, Supplier<SecondsHistogram> read) {
        registry.register(() -> {
            SecondsHistogram h = read.get();
            return HistogramSnapshot.builder().name(name).help(help)
                    .dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                            .classicHistogramBuckets(ClassicHistogramBuckets.of(h.upperBoundsSeconds(), h.counts()))
                            .sum(h.sumSeconds()).build())
                    .build();
        });
    }
}
