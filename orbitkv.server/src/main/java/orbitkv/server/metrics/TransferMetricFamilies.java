package orbitkv.server.metrics;

import static orbitkv.server.metrics.MetricFamily.counter;
import static orbitkv.server.metrics.MetricFamily.gauge;
import static orbitkv.server.metrics.MetricFamily.histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import orbitkv.server.incarnation.StatusLabels;
import orbitkv.transfer.LatencyHistogram;
import orbitkv.transfer.RouteStatus;
import orbitkv.transfer.TransferEngineStatus;
import orbitkv.transfer.TransferSourceStatus;

/**
 * Transfer's families as data over its plain snapshot records ({@link TransferSourceStatus},
 * {@link TransferEngineStatus}; issue 13 item 6, DIAG-2): bytes, READs and READ latency per route class and backend,
 * grants outstanding, pins held (count and bytes), grants ended by cause (expiries included), refusals by reason,
 * checksum failures. Every label value comes from a closed enum of orbitkv.transfer (lowercase); never a per-block,
 * request, namespace or incarnation label.
 */
public final class TransferMetricFamilies {
    /** Both ends' snapshots at one scrape. */
    public record Ends(TransferSourceStatus source, TransferEngineStatus engine) {}

    private static final List<String> BACKEND_ROUTE = List.of("backend", "route");

    /** Every transfer family: the source's, the requester's, and the Authorize refusals of both sides. */
    public static final List<MetricFamily<Ends>> FAMILIES = families();

    private TransferMetricFamilies() {}

    private static List<MetricFamily<Ends>> families() {
        List<MetricFamily<Ends>> f = new ArrayList<>();
        TransferSourceFamilies.FAMILIES.forEach(s -> f.add(s.over(Ends::source)));
        requester().forEach(r -> f.add(r.over(Ends::engine)));
        requesterWindows().forEach(r -> f.add(r.over(Ends::engine)));
        f.add(counter("orbitkv_transfer_authorize_refusals",
                "Authorize refusals by side (source: refused here; requester: seen from sources) and reason",
                List.of("side", "reason"), (e, out) -> {
                    counts(e.source().refusals(), (r, n) -> out.value(n, "source", r));
                    counts(e.engine().authorizeRefusals(), (r, n) -> out.value(n, "requester", r));
                }));
        return List.copyOf(f);
    }

    private static List<MetricFamily<TransferEngineStatus>> requester() {
        return List.of(
                counter("orbitkv_transfer_reads", "requester: verified (host-ready) READs, by backend and route class",
                        BACKEND_ROUTE, (s, out) -> s.routes()
                                .forEach(r -> out.value(r.reads(), label(r.backend()), label(r.route())))),
                counter("orbitkv_transfer_read_bytes", "requester: verified READ payload bytes, by backend and route class",
                        BACKEND_ROUTE, (s, out) -> s.routes()
                                .forEach(r -> out.value(r.bytes(), label(r.backend()), label(r.route())))),
                histogram("orbitkv_transfer_read_seconds",
                        "requester: READ latency from admission to verified completion, by backend and route class",
                        BACKEND_ROUTE, (s, out) -> {
                            double[] bounds = bounds();
                            for (RouteStatus r : s.routes()) {
                                LatencyHistogram h = r.latency();
                                out.histogram(bounds, h.counts(), h.sumNanos() / 1e9, label(r.backend()), label(r.route()));
                            }
                        }),
                counter("orbitkv_transfer_read_refusals", "requester: READs refused before any byte moved, by reason",
                        List.of("reason"), (s, out) -> counts(s.readRefusals(), (r, n) -> out.value(n, r))),
                counter("orbitkv_transfer_read_failures",
                        "requester: admitted READs that failed, by reason (checksum mismatches included)",
                        List.of("reason"), (s, out) -> counts(s.readFailures(), (r, n) -> out.value(n, r))));
    }

    /** Requester failures, windows, authorization, releases and load summaries. */
    private static List<MetricFamily<TransferEngineStatus>> requesterWindows() {
        return List.of(
                counter("orbitkv_transfer_checksum_failures",
                        "requester: READs whose bytes did not match the CRC32C computed at save time",
                        TransferEngineStatus::checksumFailures),
                counter("orbitkv_transfer_reads_ended_early",
                        "requester: READs whose deadline passed or that were cancelled (never counted as drained)",
                        List.of("cause"), (s, out) -> {
                            out.value(s.readsTimedOut(), "timed_out");
                            out.value(s.readsCancelled(), "cancelled");
                        }),
                counter("orbitkv_transfer_shared_memory_fallbacks",
                        "requester: READs that preferred shared memory and went over TCP, by reason", List.of("reason"),
                        (s, out) -> counts(s.sharedMemoryFallbacks(), (r, n) -> {
                            if (!"none".equals(r)) {
                                out.value(n, r);
                            }
                        })),
                gauge("orbitkv_transfer_receive_in_flight_bytes",
                        "requester: receive window in use (--transfer-receive-in-flight-bytes-max)",
                        TransferEngineStatus::receiveInFlightBytes),
                gauge("orbitkv_transfer_reads_in_flight", "requester: admitted READs not yet ended",
                        TransferEngineStatus::readsInFlight),
                counter("orbitkv_transfer_authorize_calls",
                        "requester: Authorize calls by outcome (granted, nothing_granted, failed); refusals by reason in orbitkv_transfer_authorize_refusals",
                        List.of("outcome"), (s, out) -> {
                            out.value(s.authorizeGranted(), "granted");
                            out.value(s.authorizeNothingGranted(), "nothing_granted");
                            out.value(s.authorizeFailures().values().stream().mapToLong(Long::longValue).sum(), "failed");
                        }),
                counter("orbitkv_transfer_authorize_failures", "requester: Authorize calls without a usable answer, by failure",
                        List.of("failure"), (s, out) -> counts(s.authorizeFailures(), (r, n) -> out.value(n, r))),
                gauge("orbitkv_transfer_grants_tracked", "requester: grants held (not yet released)",
                        TransferEngineStatus::grantsTracked),
                counter("orbitkv_transfer_releases",
                        "requester: Release calls by outcome (confirmed, not_confirmed: the source's expiry ends those)",
                        List.of("outcome"), (s, out) -> {
                            out.value(s.releasesConfirmed(), "confirmed");
                            out.value(s.releasesNotConfirmed(), "not_confirmed");
                        }),
                gauge("orbitkv_transfer_arenas_mapped", "requester: source arenas mapped read-only",
                        TransferEngineStatus::arenasMapped),
                counter("orbitkv_transfer_data_channel_authorizes",
                        "requester: Authorizes asked as AUTHORIZE frames on a data connection (issue 37 item 5), by outcome (answered; fell_back: asked over gRPC after a lost connection or a source without the frame)",
                        List.of("outcome"), (s, out) -> {
                            out.value(s.authorizesOnDataChannel(), "answered");
                            out.value(s.dataChannelAuthorizeFallbacks(), "fell_back");
                        }),
                counter("orbitkv_transfer_load_summaries",
                        "requester: source load summaries on Authorize answers (ROUTE-9), by outcome (received; rejected: malformed, dropped)",
                        List.of("outcome"), (s, out) -> {
                            out.value(s.loadSummariesReceived(), "received");
                            out.value(s.loadSummariesRejected(), "rejected");
                        }));
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

    static <E extends Enum<E>> void counts(Map<E, Long> counts, BiConsumer<String, Long> out) {
        counts.forEach((k, n) -> out.accept(label(k), n));
    }
}
