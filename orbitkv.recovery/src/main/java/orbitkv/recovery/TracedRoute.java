package orbitkv.recovery;

import java.util.Objects;
import java.util.Optional;

/**
 * One attempted route in a {@link RouteTrace}.
 *
 * @param kind the route kind
 * @param owner {@code "local"}, or the peer as {@code node/epoch}
 * @param fromIndex first demand index
 * @param toIndex demand index past the last block
 * @param bytes payload bytes
 * @param outcome how it ended
 * @param refusal the admission refusal when {@code outcome} is REFUSED
 * @param readyAfterNanos nanoseconds from the request start to its host readiness, or -1
 */
public record TracedRoute(RouteKind kind, String owner, int fromIndex, int toIndex, long bytes, RouteOutcome outcome,
        Optional<AdmissionRefusal> refusal, long readyAfterNanos) {
    public TracedRoute {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(refusal, "refusal");
        if (refusal.isPresent() != (outcome == RouteOutcome.REFUSED)) {
            throw new IllegalArgumentException("a refusal is present iff the outcome is REFUSED");
        }
    }

    /** {@code local-dram[0,3):ready}, {@code peer-ssd@n2/1[3,9):refused/pins-exhausted}. */
    public String compact() {
        StringBuilder b = new StringBuilder(48).append(kind.traceName());
        if (!kind.local()) {
            b.append('@').append(owner);
        }
        b.append('[').append(fromIndex).append(',').append(toIndex).append("):").append(outcome.traceName());
        refusal.ifPresent(r -> b.append('/').append(r.traceName()));
        return b.toString();
    }
}
