package orbitkv.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import orbitkv.server.incarnation.StatusLabels;
import orbitkv.transfer.LatencyHistogram;
import orbitkv.transfer.RouteStatus;
import orbitkv.transfer.TransferEngineStatus;
import orbitkv.transfer.TransferSourceStatus;

/**
 * Adapts transfer's plain snapshot records ({@link TransferSourceStatus}, {@link TransferEngineStatus}) to
 * Prometheus families, read at scrape time (issue 13 item 6; DIAG-2): bytes, READs and READ latency per route
 * class and backend, grants outstanding, pins held (count and bytes), grants ended by cause (expiries included),
 * refusals by reason, checksum failures. Every label value comes from a closed enum of orbitkv.transfer (lowercase);
 * never a per-block, request, namespace or incarnation label.
 */
final class TransferMetricFamilies {
    private TransferMetricFamilies() {}

    static void register(PrometheusRegistry registry, Supplier<TransferSourceStatus> source,
            Supplier<TransferEngineStatus> engine) {
        registerSource(registry, source);
        registerRequester(registry, engine);
        CounterWithCallback.builder().name("orbitkv_transfer_authorize_refusals")
                .help("Authorize refusals by side (source: refused here; requester: seen from sources) and reason")
                .labelNames("side", "reason").callback(cb -> {
                    counts(source.get().refusals(), (r, n) -> cb.call(n, "source", r));
                    counts(engine.get().authorizeRefusals(), (r, n) -> cb.call(n, "requester", r));
                }).register(registry);
    }

    private static void registerSource(PrometheusRegistry registry, Supplier<TransferSourceStatus> source) {
        GaugeWithCallback.builder().name("orbitkv_transfer_grants_outstanding").help("source: grants not yet ended")
                .callback(cb -> cb.call(source.get().grantsOutstanding())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_transfer_pins_held")
                .help("source: blocks pinned for grants (ended grants whose payload is still being sent included)")
                .callback(cb -> cb.call(source.get().pinsHeld())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_transfer_pinned_bytes").help("source: payload bytes pinned for grants, by intent")
                .labelNames("intent").callback(cb -> {
                    TransferSourceStatus s = source.get();
                    cb.call(s.pinnedBytesHeld() - s.prefetchPinnedBytesHeld(), "foreground");
                    cb.call(s.prefetchPinnedBytesHeld(), "prefetch");
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_grants_issued").help("source: grants issued")
                .callback(cb -> cb.call(source.get().grantsIssued())).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_grants_ended")
                .help("source: grants ended, by cause (released, expired, excluded, fenced, closed)")
                .labelNames("cause").callback(cb -> counts(source.get().grantsEnded(), (c, n) -> cb.call(n, c)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_sends_cut")
                .help("source: sends whose data connection was closed because their grant ended (a stalled requester), by cause")
                .labelNames("cause").callback(cb -> counts(source.get().sendsCut(), (c, n) -> cb.call(n, c)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_data_refusals")
                .help("source: READ requests refused by the data listener, by reason")
                .labelNames("reason").callback(cb -> counts(source.get().dataRefusals(), (r, n) -> cb.call(n, r)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_served_reads").help("source: blocks sent completely, by route class")
                .labelNames("route").callback(cb -> counts(source.get().readsServed(), (r, n) -> cb.call(n, r)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_served_bytes").help("source: payload bytes sent completely, by route class")
                .labelNames("route").callback(cb -> counts(source.get().bytesServed(), (r, n) -> cb.call(n, r)))
                .register(registry);
        GaugeWithCallback.builder().name("orbitkv_transfer_egress_in_flight_bytes")
                .help("source: payload bytes handed to data connections and not yet written (--transfer-egress-in-flight-bytes-max)")
                .callback(cb -> cb.call(source.get().egressInFlightBytes())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_transfer_data_connections").help("source: open data connections")
                .callback(cb -> cb.call(source.get().dataConnections())).register(registry);
        // issue 33: data listener bounds
        CounterWithCallback.builder().name("orbitkv_transfer_data_connections_refused")
                .help("source: data connections closed as soon as accepted, by bound (--transfer-data-connections-max, --transfer-data-connections-per-address-max)")
                .labelNames("cause").callback(cb -> counts(source.get().dataConnectionRefusals(), (c, n) -> cb.call(n, c)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_data_connection_timeouts")
                .help("source: data connections closed by a deadline (header: --transfer-data-header-timeout-ms, idle: --transfer-data-idle-timeout-ms)")
                .labelNames("deadline").callback(cb -> counts(source.get().dataConnectionTimeouts(), (c, n) -> cb.call(n, c)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_data_read_pauses")
                .help("source: times a data connection stopped reading its socket (backpressure), by cause (reads_queued_max, not_writable)")
                .labelNames("cause").callback(cb -> counts(source.get().dataReadPauses(), (c, n) -> cb.call(n, c)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_data_accept_failures")
                .help("source: failed accepts on the data listener (logged at most once a second)")
                .callback(cb -> cb.call(source.get().dataAcceptFailures())).register(registry);
    }

    private static void registerRequester(PrometheusRegistry registry, Supplier<TransferEngineStatus> engine) {
        CounterWithCallback.builder().name("orbitkv_transfer_reads")
                .help("requester: verified (host-ready) READs, by backend and route class")
                .labelNames("backend", "route").callback(cb -> {
                    for (RouteStatus r : engine.get().routes()) {
                        cb.call(r.reads(), label(r.backend()), label(r.route()));
                    }
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_read_bytes")
                .help("requester: verified READ payload bytes, by backend and route class")
                .labelNames("backend", "route").callback(cb -> {
                    for (RouteStatus r : engine.get().routes()) {
                        cb.call(r.bytes(), label(r.backend()), label(r.route()));
                    }
                }).register(registry);
        registry.register(() -> {
            HistogramSnapshot.Builder b = HistogramSnapshot.builder().name("orbitkv_transfer_read_seconds")
                    .help("requester: READ latency from admission to verified completion, by backend and route class");
            double[] bounds = bounds();
            for (RouteStatus r : engine.get().routes()) {
                LatencyHistogram h = r.latency();
                b.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                        .labels(Labels.of("backend", label(r.backend()), "route", label(r.route())))
                        .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, h.counts()))
                        .sum(h.sumNanos() / 1e9).build());
            }
            return b.build();
        });
        CounterWithCallback.builder().name("orbitkv_transfer_read_refusals")
                .help("requester: READs refused before any byte moved, by reason")
                .labelNames("reason").callback(cb -> counts(engine.get().readRefusals(), (r, n) -> cb.call(n, r)))
                .register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_read_failures")
                .help("requester: admitted READs that failed, by reason (checksum mismatches included)")
                .labelNames("reason").callback(cb -> counts(engine.get().readFailures(), (r, n) -> cb.call(n, r)))
                .register(registry);
        registerRequesterWindows(registry, engine);
    }

    /** Requester failures, windows, authorization, releases and load summaries. */
    private static void registerRequesterWindows(PrometheusRegistry registry, Supplier<TransferEngineStatus> engine) {
        CounterWithCallback.builder().name("orbitkv_transfer_checksum_failures")
                .help("requester: READs whose bytes did not match the CRC32C computed at save time")
                .callback(cb -> cb.call(engine.get().checksumFailures())).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_reads_ended_early")
                .help("requester: READs whose deadline passed or that were cancelled (never counted as drained)")
                .labelNames("cause").callback(cb -> {
                    TransferEngineStatus s = engine.get();
                    cb.call(s.readsTimedOut(), "timed_out");
                    cb.call(s.readsCancelled(), "cancelled");
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_shared_memory_fallbacks")
                .help("requester: READs that preferred shared memory and went over TCP, by reason")
                .labelNames("reason").callback(cb -> counts(engine.get().sharedMemoryFallbacks(), (r, n) -> {
                    if (!"none".equals(r)) {
                        cb.call(n, r);
                    }
                })).register(registry);
        GaugeWithCallback.builder().name("orbitkv_transfer_receive_in_flight_bytes")
                .help("requester: receive window in use (--transfer-receive-in-flight-bytes-max)")
                .callback(cb -> cb.call(engine.get().receiveInFlightBytes())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_transfer_reads_in_flight").help("requester: admitted READs not yet ended")
                .callback(cb -> cb.call(engine.get().readsInFlight())).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_authorize_calls")
                .help("requester: Authorize calls by outcome (granted, nothing_granted, failed); refusals by reason in orbitkv_transfer_authorize_refusals")
                .labelNames("outcome").callback(cb -> {
                    TransferEngineStatus s = engine.get();
                    cb.call(s.authorizeGranted(), "granted");
                    cb.call(s.authorizeNothingGranted(), "nothing_granted");
                    cb.call(s.authorizeFailures().values().stream().mapToLong(Long::longValue).sum(), "failed");
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_authorize_failures")
                .help("requester: Authorize calls without a usable answer, by failure")
                .labelNames("failure").callback(cb -> counts(engine.get().authorizeFailures(), (r, n) -> cb.call(n, r)))
                .register(registry);
        GaugeWithCallback.builder().name("orbitkv_transfer_grants_tracked").help("requester: grants held (not yet released)")
                .callback(cb -> cb.call(engine.get().grantsTracked())).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_releases")
                .help("requester: Release calls by outcome (confirmed, not_confirmed: the source's expiry ends those)")
                .labelNames("outcome").callback(cb -> {
                    TransferEngineStatus s = engine.get();
                    cb.call(s.releasesConfirmed(), "confirmed");
                    cb.call(s.releasesNotConfirmed(), "not_confirmed");
                }).register(registry);
        GaugeWithCallback.builder().name("orbitkv_transfer_arenas_mapped").help("requester: source arenas mapped read-only")
                .callback(cb -> cb.call(engine.get().arenasMapped())).register(registry);
        CounterWithCallback.builder().name("orbitkv_transfer_load_summaries")
                .help("requester: source load summaries on Authorize answers (ROUTE-9), by outcome (received; rejected: malformed, dropped)")
                .labelNames("outcome").callback(cb -> {
                    TransferEngineStatus s = engine.get();
                    cb.call(s.loadSummariesReceived(), "received");
                    cb.call(s.loadSummariesRejected(), "rejected");
                }).register(registry);
    }

    /** The finite bounds of {@link LatencyHistogram} in seconds, then +Inf. */
    private static double[] bounds() {
        long[] nanos = LatencyHistogram.upperBoundsNanos();
        double[] s = new double[nanos.length + 1];
        for (int i = 0; i < nanos.length; i++) {
            s[i] = nanos[i] / 1e9;
        }
        s[nanos.length] = Double.POSITIVE_INFINITY;
        return s;
    }

    static String label(Enum<?> e) {
        return StatusLabels.of(e);
    }

    private static <E extends Enum<E>> void counts(Map<E, Long> counts, BiConsumer<String, Long> out) {
        counts.forEach((k, n) -> out.accept(label(k), n));
    }
}
