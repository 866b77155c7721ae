package orbitkv.recovery.exec;

import java.util.Objects;
import orbitkv.recovery.cost.Observation;
import orbitkv.recovery.ObservationOutcome;
import orbitkv.recovery.RouteClass;

/**
 * The only {@link Observation}: made by a {@link RouteRun} when its route reaches terminal evidence (or a path
 * refusal), from the run's own clock readings. No public constructor: nothing outside this package, and in it
 * nothing but a run, creates one (ROUTE-6: a shadow prediction is never an observation).
 */
public final class ExecutedObservation implements Observation {
    private final RouteClass routeClass;
    private final long bytes;
    private final int keys;
    private final long elapsedNanos;
    private final ObservationOutcome outcome;
    private final long atNanos;

    ExecutedObservation(RouteClass routeClass, long bytes, int keys, long elapsedNanos, ObservationOutcome outcome, long atNanos) {
        this.routeClass = Objects.requireNonNull(routeClass, "routeClass");
        this.outcome = Objects.requireNonNull(outcome, "outcome");
        if (bytes < 0 || keys < 1) {
            throw new IllegalArgumentException("an observation needs bytes >= 0 and keys >= 1");
        }
        this.bytes = bytes;
        this.keys = keys;
        this.elapsedNanos = Math.max(0, elapsedNanos);
        this.atNanos = atNanos;
    }

    @Override
    public RouteClass routeClass() {
        return routeClass;
    }

    @Override
    public long bytes() {
        return bytes;
    }

    @Override
    public int keys() {
        return keys;
    }

    @Override
    public long elapsedNanos() {
        return elapsedNanos;
    }

    @Override
    public ObservationOutcome outcome() {
        return outcome;
    }

    @Override
    public long atNanos() {
        return atNanos;
    }

    @Override
    public String toString() {
        return routeClass + " " + outcome + " " + bytes + "B " + elapsedNanos + "ns";
    }
}
