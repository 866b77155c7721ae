package orbitkv.recovery.cost;

import orbitkv.recovery.ObservationOutcome;
import orbitkv.recovery.RouteClass;

/**
 * One executed route's measured contribution to a request's critical path (ROUTE-3, ROUTE-5, ROUTE-6).
 *
 * <p>Not exported, sealed, and its only implementation lives in this module's execution package with no public
 * constructor: an observation exists only because a route was executed and reached terminal evidence. Nothing
 * outside the executor can create one, nothing outside this module can even name the type, and a
 * {@link orbitkv.recovery.Prediction} (what the shadow policy produces) has no path into the cost model. (It
 * was an exported sealed interface permitting a hidden class; the boundary gate refuses such a signature, and
 * no exported method takes or returns an observation, so the type belongs inside.)
 *
 * <p>The time measured for a route runs from the later of (its admission start, the previous route's host
 * readiness) to its own host readiness, so an authorization overlapped with the previous READ is never counted
 * twice when a plan's routes are summed.
 */
public sealed interface Observation permits orbitkv.recovery.exec.ExecutedObservation {
    RouteClass routeClass();

    /** Payload bytes of the route. */
    long bytes();

    /** Keys of the route. */
    int keys();

    /** Measured nanoseconds (until failure or the deadline for the non-success outcomes). */
    long elapsedNanos();

    ObservationOutcome outcome();

    /** When the terminal evidence arrived, on the selection's monotonic clock. */
    long atNanos();
}
