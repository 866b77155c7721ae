package orbitkv.recovery.exec;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.ObservationOutcome;
import orbitkv.recovery.Route;
import orbitkv.recovery.TransferPorts;

/**
 * One route of one restore and the resources it owns (ROUTE-7, ROUTE-8, ROUTE-11): receive credits, then the source
 * grant, then the READ. Ownership rule, asserted at each transition: before submission a refused or abandoned run
 * releases everything at once; after submission only the drain event releases, exactly once, whatever the READ's
 * outcome or the wait's.
 */
final class RouteRun<D> {
    private final Route route;
    private final TransferPorts<D> ports;
    private final LongSupplier clock;
    private final Runnable onDrained;
    private RunState state = RunState.NEW;
    private TransferPorts.ReceiveCredit<D> credit;
    private TransferPorts.SourceGrant<D> grant;
    private TransferPorts.ReadSubmission submission;
    private boolean drained;
    private boolean released;
    private AdmissionRefusal refusal;
    private List<StateKey> refusedKeys = List.of();
    private long admitStartNanos;
    private long terminalNanos;
    private final AtomicLong readyStamp = new AtomicLong(Long.MIN_VALUE);

    /** @param onDrained called once, when a submitted run's resources have been released */
    RouteRun(Route route, TransferPorts<D> ports, LongSupplier clock, Runnable onDrained) {
        this.route = route;
        this.ports = ports;
        this.clock = clock;
        this.onDrained = onDrained;
    }

    Route route() {
        return route;
    }

    synchronized RunState state() {
        return state;
    }

    AdmissionRefusal refusal() {
        return refusal;
    }

    List<StateKey> refusedKeys() {
        return refusedKeys;
    }

    long admitStartNanos() {
        return admitStartNanos;
    }

    long terminalNanos() {
        return terminalNanos;
    }

    /** Host readiness on the selection clock, stamped when the READ's future completed. */
    long readyNanos() {
        return readyStamp.get();
    }

    synchronized boolean drained() {
        return drained;
    }

    D destination() {
        return credit.destination();
    }

    /** Credits, then the grant; ends ADMITTED or REFUSED (with everything released). */
    void admit(long deadlineNanos) {
        admitStartNanos = clock.getAsLong();
        switch (Objects.requireNonNull(ports.credits(route), "credits outcome")) {
            case TransferPorts.CreditOutcome.Refused<D> r -> {
                refuse(r.reason(), List.of());
                return;
            }
            case TransferPorts.CreditOutcome.Held<D> h -> {
                credit = h.credit();
                transition(RunState.CREDITED);
            }
        }
        TransferPorts.GrantOutcome<D> granted;
        try {
            granted = Objects.requireNonNull(ports.authorize(route, deadlineNanos), "grant outcome");
        } catch (RuntimeException e) { // a broken port must not leak the credits already held
            refuse(AdmissionRefusal.UNREACHABLE, List.of());
            return;
        }
        switch (granted) {
            case TransferPorts.GrantOutcome.Refused<D> r -> refuse(r.reason(), r.refusedKeys());
            case TransferPorts.GrantOutcome.Granted<D> g -> {
                grant = g.grant();
                transition(RunState.ADMITTED);
            }
        }
    }

    private void refuse(AdmissionRefusal reason, List<StateKey> keys) {
        refusal = reason;
        refusedKeys = keys;
        terminalNanos = clock.getAsLong();
        transition(RunState.REFUSED);
        releaseUnsubmitted();
    }

    /** Submits the READ; from now on only drain releases. */
    void submit() {
        transition(RunState.SUBMITTED);
        try {
            submission = Objects.requireNonNull(grant.read(credit.destination()), "read submission");
        } catch (RuntimeException e) {
            // A broken port: whether anything started is unknown, so the resources stay charged (ROUTE-11) and the
            // READ counts as failed, never as ready.
            submission = new BrokenSubmission(e);
        }
        submission.ready().whenComplete((o, t) -> readyStamp.compareAndSet(Long.MIN_VALUE, clock.getAsLong()));
        submission.drained().whenComplete((v, t) -> onDrainEvent());
    }

    /**
     * Waits for the READ's terminal outcome until {@code deadlineNanos}. A timeout or interrupt ends the wait, not the
     * READ: the run keeps its resources until drain.
     */
    RunState await(long deadlineNanos) {
        RunState outcome;
        try {
            var ready = submission.ready();
            long remaining = deadlineNanos - clock.getAsLong();
            if (!ready.isDone() && remaining <= 0) {
                throw new TimeoutException();
            }
            TransferPorts.ReadyOutcome o = ready.isDone() ? ready.get() : ready.get(remaining, TimeUnit.NANOSECONDS);
            outcome = o instanceof TransferPorts.ReadyOutcome.Ready ? RunState.READY : RunState.PAYLOAD_FAILED;
            // The stamp's own callback runs on the completing thread and may not have run yet when get() returns here
            // (seen under load, issue 25): stamp now if it has not, so a READY run is never timed from the unset
            // sentinel (Long.MIN_VALUE - start overflowed to a ~9.2e18 ns observation that swamped the cost model).
            readyStamp.compareAndSet(Long.MIN_VALUE, clock.getAsLong());
        } catch (TimeoutException e) {
            outcome = RunState.TIMED_OUT;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome = RunState.CANCELLED;
        } catch (ExecutionException | CancellationException e) { // a broken port: never treated as ready
            outcome = RunState.PAYLOAD_FAILED;
        }
        terminalNanos = clock.getAsLong();
        transition(outcome);
        return outcome;
    }

    /** An admitted, unsubmitted run of a request that ended: released at once. */
    void abandon() {
        transition(RunState.ABANDONED);
        releaseUnsubmitted();
    }

    private synchronized void transition(RunState to) {
        state = state.to(to);
    }

    private synchronized void releaseUnsubmitted() {
        if (state.submitted()) {
            throw new IllegalStateException("a submitted route is released only by drain");
        }
        releaseOnce();
    }

    private void onDrainEvent() {
        boolean first;
        synchronized (this) {
            if (!state.submitted()) {
                throw new IllegalStateException("drain before submission");
            }
            first = !drained;
            drained = true;
            if (first) {
                releaseOnce();
            }
        }
        if (first) {
            onDrained.run();
        }
    }

    private void releaseOnce() {
        if (released) {
            return;
        }
        released = true;
        if (grant != null) {
            grant.release();
        }
        if (credit != null) {
            credit.release();
        }
    }

    /**
     * The observation of a terminal run, or null: successes from max(admission start, previous readiness) to its
     * readiness; failures and timeouts to their terminal evidence; path refusals over their admission; cancelled
     * waits and metadata refusals are not path evidence.
     */
    ExecutedObservation observation(long previousReadyNanos) {
        long start = previousReadyNanos - admitStartNanos > 0 ? previousReadyNanos : admitStartNanos;
        return switch (state()) {
            case READY -> new ExecutedObservation(route.routeClass(), route.bytes(), route.blocks().size(),
                    readyNanos() - start, ObservationOutcome.SUCCEEDED, readyNanos());
            case PAYLOAD_FAILED -> {
                long at = readyNanos() != Long.MIN_VALUE ? readyNanos() : terminalNanos;
                yield new ExecutedObservation(route.routeClass(), route.bytes(), route.blocks().size(), at - start,
                        ObservationOutcome.FAILED, at);
            }
            case TIMED_OUT -> new ExecutedObservation(route.routeClass(), route.bytes(), route.blocks().size(),
                    terminalNanos - start, ObservationOutcome.TIMED_OUT, terminalNanos);
            case REFUSED -> refusal.pathRisk()
                    ? new ExecutedObservation(route.routeClass(), route.bytes(), route.blocks().size(),
                            terminalNanos - admitStartNanos, ObservationOutcome.REFUSED, terminalNanos)
                    : null;
            default -> null;
        };
    }

    /** Stands for a submission whose port threw: failed at once, never drained. */
    private record BrokenSubmission(RuntimeException cause) implements TransferPorts.ReadSubmission {
        @Override
        public java.util.concurrent.CompletableFuture<TransferPorts.ReadyOutcome> ready() {
            return java.util.concurrent.CompletableFuture.completedFuture(
                    new TransferPorts.ReadyOutcome.PayloadFailure("port-error", String.valueOf(cause)));
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> drained() {
            return new java.util.concurrent.CompletableFuture<>();
        }
    }
}
