package orbitkv.server.metrics;

import static orbitkv.server.metrics.MetricFamily.counter;
import static orbitkv.server.metrics.MetricFamily.gauge;
import static orbitkv.server.metrics.MetricFamily.histogram;

import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import orbitkv.inventory.RequesterSessionMetrics;
import orbitkv.inventory.SecondsHistogram;
import orbitkv.inventory.SourceSessionMetrics;

/**
 * The inventory sessions' families as data over the inventory module's plain metric snapshots (DIAG-2, DIAG-3); the
 * inventory module itself depends on no metrics library. Each family carries both ends' data points, told apart by
 * the bounded {@code side} label (source|requester); every other label comes from a wire enum (frame body kind,
 * ErrorCause) or {@code ResetCause}.
 */
public final class SessionMetricFamilies {
    /** Both ends' snapshots at one scrape. */
    public record Ends(SourceSessionMetrics source, RequesterSessionMetrics requester) {}

    /** The intentional coalescing wait of this Manager's source (DIAG-3, apart from transport lag). */
    public static final MetricFamily<SecondsHistogram> INTENTIONAL_WAIT = histogram(
            "orbitkv_inventory_intentional_wait_seconds", "Intentional coalescing wait before a reader reads (not transport lag)",
            List.of(), (h, out) -> MetricFamily.seconds(out, h));

    /** The session families of both ends. */
    public static final List<MetricFamily<Ends>> FAMILIES = List.of(
            counter("orbitkv_session_mutations",
                    "Journal positions covered (original) vs records sent (coalesced) by deltas and replay", List.of("kind"),
                    (e, out) -> {
                        out.value(e.source().originalMutations(), "original");
                        out.value(e.source().coalescedRecords(), "coalesced");
                    }),
            counter("orbitkv_session_frames", "Frames sent or received, by side and body kind",
                    List.of("side", "direction", "kind"), (e, out) -> {
                        counts(e.source().framesSent(), (kind, n) -> out.value(n, "source", "sent", kind));
                        counts(e.source().framesReceived(), (kind, n) -> out.value(n, "source", "received", kind));
                        counts(e.requester().framesSent(), (kind, n) -> out.value(n, "requester", "sent", kind));
                        counts(e.requester().framesReceived(), (kind, n) -> out.value(n, "requester", "received", kind));
                    }),
            counter("orbitkv_session_bytes", "Frame bytes by side and measure (encoded on the wire, decoded records)",
                    List.of("side", "measure"), (e, out) -> {
                        out.value(e.source().encodedBytes(), "source", "encoded");
                        out.value(e.requester().encodedBytes(), "requester", "encoded");
                        out.value(e.requester().decodedBytes(), "requester", "decoded");
                    }),
            counter("orbitkv_session_snapshot_bytes", "Encoded bytes of snapshot pages and of bootstrap replay",
                    List.of("part"), (e, out) -> {
                        out.value(e.source().snapshotPageBytes(), "pages");
                        out.value(e.source().snapshotReplayBytes(), "replay");
                    }),
            counter("orbitkv_session_rejections", "Sessions closed or frames refused, by side and wire ErrorCause",
                    List.of("side", "cause"), (e, out) -> {
                        counts(e.source().rejections(), (cause, n) -> out.value(n, "source", cause));
                        counts(e.requester().rejections(), (cause, n) -> out.value(n, "requester", cause));
                    }),
            counter("orbitkv_session_resets", "Requester staging resets by ResetCause", List.of("cause"),
                    (e, out) -> counts(e.requester().resets(), (cause, n) -> out.value(n, cause))),
            counter("orbitkv_session_duplicate_acks", "ACKs at or below the acknowledged frame (ignored, SES-13)",
                    e -> e.source().duplicateAcks()),
            counter("orbitkv_session_mismatch_drops", "Frames carrying another session id, dropped (SES-6)",
                    List.of("side"), (e, out) -> {
                        out.value(e.source().sessionMismatchDrops(), "source");
                        out.value(e.requester().sessionMismatchDrops(), "requester");
                    }),
            counter("orbitkv_session_send_scheduling", "Source send scheduling (ROUTE-10): pump steps that yielded to a "
                    + "higher class, send-step requests refused because the bounded send queue was full", List.of("event"),
                    (e, out) -> {
                        out.value(e.source().sendYields(), "yield");
                        out.value(e.source().sendQueueRefusals(), "queue_refused");
                    }),
            histogram("orbitkv_session_bootstrap_seconds", "Requester: SnapshotBegin receipt to installed view", List.of(),
                    (e, out) -> MetricFamily.seconds(out, e.requester().bootstrapSeconds())),
            histogram("orbitkv_session_ack_round_trip_seconds",
                    "Source: data frame handed to transport until its ACK returned (transport and apply lag, "
                            + "apart from the intentional coalescing wait)", List.of(),
                    (e, out) -> MetricFamily.seconds(out, e.source().ackRoundTripSeconds())),
            gauge("orbitkv_session_peak_outstanding_credit_bytes", "Highest outstanding credit of any session of this process",
                    e -> e.source().peakOutstandingCreditBytes()));

    private SessionMetricFamilies() {}

    private static <E extends Enum<E>> void counts(Map<E, Long> counts, BiConsumer<String, Long> out) {
        counts.forEach((k, n) -> out.accept(k.name(), n));
    }
}
