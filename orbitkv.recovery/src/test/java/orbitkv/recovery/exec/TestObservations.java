package orbitkv.recovery.exec;

import orbitkv.recovery.cost.Observation;
import orbitkv.recovery.ObservationOutcome;
import orbitkv.recovery.RouteClass;

/** Test-only access to the package-private observation constructor (cost-model unit tests). */
public final class TestObservations {
    private TestObservations() {}

    public static Observation of(RouteClass c, long bytes, long nanos, ObservationOutcome outcome, long atNanos) {
        return new ExecutedObservation(c, bytes, 1, nanos, outcome, atNanos);
    }
}
