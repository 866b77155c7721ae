package orbitkv.server.incarnation;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import orbitkv.server.transfer.PeerTransfer;
import orbitkv.transfer.TransferEngineStatus;
import orbitkv.transfer.TransferSourceStatus;

/** The transfer section of {@code /cache/metadata/status}, from transfer's snapshot records. */
public final class TransferStatusView {
    private TransferStatusView() {}

    public static IncarnationStatus.TransferStatus of(PeerTransfer t) {
        TransferSourceStatus s = t.sourceStatus();
        TransferEngineStatus e = t.engineStatus();
        IncarnationStatus.TransferSourceView source = source(s, t.dataEndpoint().toString(), t.config().sourceEgressInFlightBytesMax());
        List<IncarnationStatus.TransferRoute> routes = e.routes().stream().map(r -> new IncarnationStatus.TransferRoute(
                StatusLabels.of(r.backend()), StatusLabels.of(r.route()), r.reads(), r.bytes(),
                r.latency().sumNanos())).toList();
        IncarnationStatus.TransferRequesterView requester = new IncarnationStatus.TransferRequesterView(
                StatusLabels.of(t.defaultBackend()), routes, e.readsAdmitted(), e.readsTerminated(),
                names(e.readRefusals()), names(e.readFailures()), e.checksumFailures(), e.readsTimedOut(),
                e.readsCancelled(), names(e.sharedMemoryFallbacks()), e.receiveInFlightBytes(),
                t.config().receiveInFlightBytesMax(), e.readsInFlight(), e.authorizeGranted(), e.authorizeNothingGranted(),
                names(e.authorizeRefusals()), names(e.authorizeFailures()), e.grantsTracked(), e.releasesConfirmed(),
                e.releasesNotConfirmed(), e.arenasMapped(), e.loadSummariesReceived(), e.loadSummariesRejected(),
                t.receiveCredits().heldBytes(), t.receiveCredits().refusals());
        return new IncarnationStatus.TransferStatus(source, requester);
    }

    /**
     * The source half from the source's snapshot, its data endpoint and its egress bound (apart from {@link #of} so a
     * unit test can map a snapshot with chosen counts: a {@link PeerTransfer} needs a running Manager).
     */
    public static IncarnationStatus.TransferSourceView source(TransferSourceStatus s, String dataEndpoint, long egressInFlightBytesMax) {
        return new IncarnationStatus.TransferSourceView(dataEndpoint, s.grantsOutstanding(), s.pinsHeld(), s.pinnedBytesHeld(),
                s.prefetchPinnedBytesHeld(), s.grantsIssued(), names(s.grantsEnded()), names(s.refusals()),
                names(s.dataRefusals()), names(s.readsServed()), names(s.bytesServed()), s.egressInFlightBytes(),
                egressInFlightBytesMax, s.dataConnections(), names(s.sendsCut()), names(s.dataConnectionRefusals()),
                names(s.dataConnectionTimeouts()), names(s.dataReadPauses()), s.dataAcceptFailures());
    }

    private static <E extends Enum<E>> Map<String, Long> names(Map<E, Long> counts) {
        Map<String, Long> out = new LinkedHashMap<>();
        counts.forEach((k, v) -> out.put(StatusLabels.of(k), v));
        return out;
    }
}
