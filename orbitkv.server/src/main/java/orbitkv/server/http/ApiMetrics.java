package orbitkv.server.http;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import orbitkv.server.incarnation.StatusLabels;
import orbitkv.server.api.ApiError;

/**
 * The Manager's Prometheus metrics (DIAG-2, DIAG-3). Labels are bounded enumerations only: endpoint,
 * status class, error code, medium, refusal reason. Never a per-block, per-request, namespace or incarnation
 * label (DIAG-2). These are the HTTP adapter's own families (request events, connections, admission); the status
 * families (tiers, planner, incarnation) are data in {@code orbitkv.server.metrics}, added by the Manager core.
 */
final class ApiMetrics {
    static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;

    private final PrometheusRegistry registry;
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Counter requests;
    private final Counter errors;
    private final Counter connectionsOpened;
    private final Counter connectionsClosed;
    private final Counter lingeredBytes;
    private final Counter restoredBlocks;
    private final Counter restoredBytes;

    /**
     * @param registry the Manager's one registry (created by the Manager core with the status families); the HTTP
     *     and restore event families join it, and a scrape reads them all
     */
    ApiMetrics(PrometheusRegistry registry, HttpAdmission admission) {
        this.registry = java.util.Objects.requireNonNull(registry, "registry");
        requests = Counter.builder().name("orbitkv_http_requests").help("HTTP requests answered, by endpoint and status class")
                .labelNames("endpoint", "status_class").register(registry);
        errors = Counter.builder().name("orbitkv_http_errors").help("HTTP error answers by stable error code")
                .labelNames("code").register(registry);
        connectionsOpened = Counter.builder().name("orbitkv_http_connections_opened").help("HTTP connections accepted")
                .register(registry);
        connectionsClosed = Counter.builder().name("orbitkv_http_connections_closed")
                .help("HTTP connections closed, by cause (client, answered_close, refused, header_timeout, body_timeout,"
                        + " idle_timeout, linger_timeout, linger_bytes, write_failed, write_stall, io_error,"
                        + " shutdown)")
                .labelNames("cause").register(registry);
        lingeredBytes = Counter.builder().name("orbitkv_http_lingered_bytes")
                .help("request bytes read and discarded after an early refusal").register(registry);
        restoredBlocks = Counter.builder().name("orbitkv_restore_blocks")
                .help("blocks delivered by /cache/restore, by route kind (local-dram, local-ssd, peer-dram, peer-ssd)"
                        + " and backend (local, tcp, shared_memory)")
                .labelNames("route", "backend").register(registry);
        restoredBytes = Counter.builder().name("orbitkv_restore_bytes")
                .help("payload bytes delivered by /cache/restore, by route class and backend")
                .labelNames("route", "backend").register(registry);
        GaugeWithCallback.builder().name("orbitkv_http_requests_in_flight").help("request slots taken")
                .callback(cb -> cb.call(admission.requestsInFlight())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_http_body_bytes_in_flight")
                .help("request body bytes admitted (reserved) across connections")
                .callback(cb -> cb.call(admission.bodyBytes().used())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_http_body_bytes_in_flight_peak")
                .help("high-water mark of admitted request body bytes")
                .callback(cb -> cb.call(admission.bodyBytes().peak())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_http_body_bytes_in_flight_max")
                .help("--http-body-bytes-in-flight-max")
                .callback(cb -> cb.call(admission.bodyBytes().max())).register(registry);
    }

    void answered(String endpoint, int status) {
        requests.labelValues(endpoint, (status / 100) + "xx").inc();
    }

    void error(ApiError code) {
        errors.labelValues(code.name()).inc();
    }

    void connectionOpened() {
        connectionsOpened.inc();
    }

    void connectionClosed(String cause) {
        connectionsClosed.labelValues(cause).inc();
    }

    /**
     * One delivered restore block: {@code kind} is local-dram, local-ssd, peer-dram or peer-ssd, the one spelling of a
     * route kind in headers, traces and every metric (issue 34 item 3); backend null = local.
     */
    void restored(String kind, orbitkv.transfer.Backend backend, long bytes) {
        String route = kind;
        String b = backend == null ? "local" : StatusLabels.of(backend);
        restoredBlocks.labelValues(route, b).inc();
        restoredBytes.labelValues(route, b).inc(bytes);
    }

    void lingered(long bytes) {
        lingeredBytes.inc(bytes);
    }

    byte[] scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        try {
            writer.write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
