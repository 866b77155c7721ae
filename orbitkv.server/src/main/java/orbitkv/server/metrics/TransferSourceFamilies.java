package orbitkv.server.metrics;

import static orbitkv.server.metrics.MetricFamily.counter;
import static orbitkv.server.metrics.MetricFamily.gauge;
import static orbitkv.server.metrics.TransferMetricFamilies.counts;

import java.util.List;
import orbitkv.transfer.TransferSourceStatus;

/** The transfer source's families as data over one {@link TransferSourceStatus} (issue 13 item 6, issue 33; DIAG-2). */
final class TransferSourceFamilies {
    static final List<MetricFamily<TransferSourceStatus>> FAMILIES = List.of(
            gauge("orbitkv_transfer_grants_outstanding", "source: grants not yet ended", TransferSourceStatus::grantsOutstanding),
            gauge("orbitkv_transfer_pins_held",
                    "source: blocks pinned for grants (ended grants whose payload is still being sent included)",
                    TransferSourceStatus::pinsHeld),
            gauge("orbitkv_transfer_pinned_bytes", "source: payload bytes pinned for grants, by intent", List.of("intent"),
                    (s, out) -> {
                        out.value(s.pinnedBytesHeld() - s.prefetchPinnedBytesHeld(), "foreground");
                        out.value(s.prefetchPinnedBytesHeld(), "prefetch");
                    }),
            counter("orbitkv_transfer_grants_issued", "source: grants issued", TransferSourceStatus::grantsIssued),
            counter("orbitkv_transfer_grants_ended", "source: grants ended, by cause (released, expired, excluded, fenced, closed)",
                    List.of("cause"), (s, out) -> counts(s.grantsEnded(), (c, n) -> out.value(n, c))),
            counter("orbitkv_transfer_sends_cut",
                    "source: sends whose data connection was closed because their grant ended (a stalled requester), by cause",
                    List.of("cause"), (s, out) -> counts(s.sendsCut(), (c, n) -> out.value(n, c))),
            counter("orbitkv_transfer_data_refusals", "source: READ requests refused by the data listener, by reason",
                    List.of("reason"), (s, out) -> counts(s.dataRefusals(), (r, n) -> out.value(n, r))),
            counter("orbitkv_transfer_served_reads", "source: blocks sent completely, by route class",
                    List.of("route"), (s, out) -> counts(s.readsServed(), (r, n) -> out.value(n, r))),
            counter("orbitkv_transfer_served_bytes", "source: payload bytes sent completely, by route class",
                    List.of("route"), (s, out) -> counts(s.bytesServed(), (r, n) -> out.value(n, r))),
            gauge("orbitkv_transfer_egress_in_flight_bytes",
                    "source: payload bytes handed to data connections and not yet written (--transfer-egress-in-flight-bytes-max)",
                    TransferSourceStatus::egressInFlightBytes),
            gauge("orbitkv_transfer_data_connections", "source: open data connections", TransferSourceStatus::dataConnections),
            // issue 33: data listener bounds
            counter("orbitkv_transfer_data_connections_refused",
                    "source: data connections closed as soon as accepted, by bound (--transfer-data-connections-max, --transfer-data-connections-per-address-max)",
                    List.of("cause"), (s, out) -> counts(s.dataConnectionRefusals(), (c, n) -> out.value(n, c))),
            counter("orbitkv_transfer_data_connection_timeouts",
                    "source: data connections closed by a deadline (header: --transfer-data-header-timeout-ms, idle: --transfer-data-idle-timeout-ms)",
                    List.of("deadline"), (s, out) -> counts(s.dataConnectionTimeouts(), (c, n) -> out.value(n, c))),
            counter("orbitkv_transfer_data_read_pauses",
                    "source: times a data connection stopped reading its socket (backpressure), by cause (reads_queued_max, not_writable)",
                    List.of("cause"), (s, out) -> counts(s.dataReadPauses(), (c, n) -> out.value(n, c))),
            counter("orbitkv_transfer_data_accept_failures", "source: failed accepts on the data listener (logged at most once a second)",
                    TransferSourceStatus::dataAcceptFailures));

    private TransferSourceFamilies() {}
}
