package orbitkv.server.restore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import orbitkv.recovery.TransferPorts;
import orbitkv.server.admission.NodeAdmissionService;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.Destination;
import orbitkv.transfer.Grant;
import orbitkv.transfer.ReadHandle;
import orbitkv.transfer.ReadResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A granted peer route: its blocks are READ in order, at most {@code --restore-route-reads-in-flight-max} at once and
 * within the route's receive credits, each straight into its record and verified by the engine (CRC32C). Ready when
 * every block completed; a failed, refused, timed-out or cancelled READ cancels the rest and ends the route as a
 * payload failure. Drained when every submitted READ terminated (the engine delivers an outcome only after the READ
 * physically stopped, INV-8).
 *
 * <p>issue 39 (ROUTE-11): with the node admission window on, each READ is charged to this Manager's READ lane before it
 * starts, with the restore's deadline and the route's remaining bytes, and waits there in the lane's scheduling order
 * (earliest deadline first; the pacer): so a latency-sensitive restore's READs go ahead of bulk READs waiting on the
 * same NIC, and paced bulk READs keep the bottleneck's queue short. The charge returns when the READ physically ended.
 * A refused charge (its deadline passed while queued, a full queue) ends the route as a payload failure named
 * {@code admission-<reason>}.
 */
final class PeerReads implements TransferPorts.SourceGrant<RestoreRecords> {
    private static final Logger LOG = LoggerFactory.getLogger(PeerReads.class);

    private final RestoreTransfer t;
    private final Grant grant;
    private final BackendPolicy policy;
    private final RestoreNotes notes;
    private final LongSupplier remainingMs;
    private final int readsMax;
    private final CompletableFuture<TransferPorts.ReadyOutcome> ready = new CompletableFuture<>();
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private final List<ReadHandle> handles = new ArrayList<>();
    private RestoreRecords dst;
    private int next;
    private int inFlight;
    private long inFlightBytes;
    private int completed;
    private boolean failed;
    private boolean submitting;
    /** Route READ bytes not yet charged to the node window (its remaining work in the window's scheduling order). */
    private long unchargedBytes;
    private final Optional<NodeAdmissionService> node;
    private final RestoreStages stages;
    /** When {@link #read} was called, for {@link RestoreStages#ready} (0 when no recording times it); guarded by this. */
    private long submittedNanos;

    PeerReads(RestoreTransfer t, Grant grant, BackendPolicy policy, RestoreNotes notes, LongSupplier remainingMs,
            RestoreStages stages) {
        this.t = t;
        this.grant = grant;
        this.policy = policy;
        this.notes = notes;
        this.remainingMs = remainingMs;
        this.readsMax = t.readsInFlightPerRoute();
        this.node = t.admission();
        this.stages = stages;
    }

    @Override
    public TransferPorts.ReadSubmission read(RestoreRecords destination) {
        synchronized (this) {
            submittedNanos = stages.now();
            dst = destination;
            for (int b = 0; b < dst.records.size(); b++) {
                unchargedBytes += size(b);
            }
        }
        submitMore();
        return LocalRoutePort.submission(ready, drained);
    }

    private void submitMore() {
        while (true) {
            int b;
            long uncharged;
            synchronized (this) {
                if (submitting || failed || next >= dst.records.size() || inFlight >= readsMax
                        || inFlight > 0 && inFlightBytes + size(next) > dst.creditBytes) {
                    return;
                }
                submitting = true;
                b = next++;
                inFlight++;
                inFlightBytes += size(b);
                uncharged = unchargedBytes;
                unchargedBytes -= size(b);
            }
            CompletableFuture<NodeAdmissionService.ManagerCharge> charge;
            try {
                charge = node.isEmpty() ? NOT_CHARGED : node.get().chargeManagerReadAsync(size(b), System.nanoTime()
                        + Math.max(1, remainingMs.getAsLong()) * 1_000_000L, uncharged);
            } catch (RuntimeException e) {
                charge = CompletableFuture.failedFuture(e);
            }
            synchronized (this) {
                submitting = false;
            }
            // issue 39: the READ starts once the node window granted its bytes (at once, or in deadline order)
            charge.whenComplete((c, x) -> charged(b, c, x));
        }
    }

    private static final CompletableFuture<NodeAdmissionService.ManagerCharge> NOT_CHARGED =
            CompletableFuture.completedFuture(null);

    /** Block {@code b}'s node charge was answered: READ it, or end it unsubmitted (refused, or the route failed). */
    private void charged(int b, NodeAdmissionService.ManagerCharge c, Throwable x) {
        boolean routeFailed;
        synchronized (this) {
            routeFailed = failed;
        }
        if (x != null || c != null && !c.granted()) {
            outcome(b, null, new NodeAdmissionRefused(x != null ? "admission-error: " + x : c.refused().detail(),
                    x != null ? "admission-error" : "admission-" + c.refused().reason().wireName()));
            return;
        }
        if (routeFailed) {
            if (c != null) {
                node.orElseThrow().returnManagerReadUnused(c, size(b));
            }
            outcome(b, null, new NodeAdmissionRefused("route ended before the READ started", "cancelled"));
            return;
        }
        ReadHandle h;
        try {
            h = t.engine().read(grant, b, Destination.of(dst.payload(b)), policy,
                    Duration.ofMillis(Math.max(1, remainingMs.getAsLong())));
        } catch (RuntimeException e) {
            // The engine refused by contract violation and never started this READ: end the route as a payload
            // failure now, so that it drains and its receive credits and response memory return (not at the
            // request's deadline, and never charged forever).
            if (c != null) {
                node.orElseThrow().returnManagerReadUnused(c, size(b));
            }
            outcome(b, null, e);
            return;
        }
        synchronized (this) {
            handles.add(h);
        }
        h.outcome().whenComplete((o, y) -> {
            if (c != null) {
                node.orElseThrow().returnManagerRead(c, size(b)); // the READ physically ended (INV-8)
            }
            outcome(b, o, y);
        });
    }

    /** A READ that never started because the node admission window refused it (or its route ended while it waited). */
    private static final class NodeAdmissionRefused extends RuntimeException {
        final String name;

        NodeAdmissionRefused(String detail, String name) {
            super(detail, null, false, false);
            this.name = name;
        }
    }

    private void outcome(int b, ReadResult o, Throwable x) {
        List<ReadHandle> cancel = List.of();
        boolean isReady = false;
        boolean isFailed = false;
        boolean isDrained;
        long submitted;
        synchronized (this) {
            inFlight--;
            inFlightBytes -= size(b);
            if (x == null && o instanceof ReadResult.Completed c && !failed) {
                dst.filled(b, c.backend());
                completed++;
                isReady = completed == dst.records.size();
            } else if (!failed) {
                failed = true;
                isFailed = true;
                noteFailure(o, x);
                cancel = List.copyOf(handles);
            }
            isDrained = inFlight == 0 && (failed || completed == dst.records.size()) && !submitting;
            submitted = submittedNanos;
        }
        cancel.forEach(ReadHandle::cancel);
        if (isReady) {
            dst.ready();
            stages.ready(submitted);
            ready.complete(new TransferPorts.ReadyOutcome.Ready());
        }
        if (isFailed) {
            ready.complete(new TransferPorts.ReadyOutcome.PayloadFailure(notes.failure(),
                    String.valueOf(o != null ? o : x)));
        }
        if (isDrained) {
            drained.complete(null);
        } else if (!isFailed) {
            submitMore();
        }
    }

    private void noteFailure(ReadResult o, Throwable x) {
        if (o == null && x instanceof NodeAdmissionRefused r) {
            notes.failure(r.name, true);
            return;
        }
        switch (o) {
            case ReadResult.Refused r -> notes.failure(RouteHeader.name(r.reason()), switch (r.reason()) {
                case CREDITS_EXHAUSTED, READS_IN_FLIGHT_LIMIT, CONNECTIONS_EXHAUSTED -> true;
                default -> false;
            });
            case ReadResult.Failed f -> {
                LOG.warn("restore: READ from {} failed ({}): {}", grant, f.reason(), f.detail());
                notes.failure(RouteHeader.name(f.reason()));
            }
            case ReadResult.TimedOut timedOut -> notes.failure("timed-out");
            case ReadResult.Cancelled cancelled -> notes.failure("cancelled");
            case null -> notes.failure("engine-error: " + x);
            default -> notes.failure("unexpected");
        }
    }

    private long size(int b) {
        return dst.route.blocks().get(b).sizeBytes();
    }

    @Override
    public void release() {
        t.engine().release(grant); // the engine sends it once every READ of the grant terminated
    }
}
