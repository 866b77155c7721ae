package orbitkv.recovery;

import java.util.Objects;
import java.util.Optional;

/**
 * The plan choice and its explanation (ROUTE-3, ROUTE-4, ROUTE-6).
 *
 * @param mode the policy mode in force
 * @param reason why the fixed plan or the alternative; in SHADOW mode, what COST_DRIVEN would have decided
 * @param alternativeExecuted true iff the executed routes are the cost-driven alternative (never in SHADOW)
 * @param fixed the fixed plan's prediction, when every class it uses has an estimate
 * @param alternative the best alternative's prediction, when a search ran and found one
 * @param alternativeSummary the best alternative's routes in compact trace form ({@code ""} when none)
 * @param alternativesEvaluated alternatives evaluated in this batch (bounded by the policy)
 * @param alternativesPruned alternatives dropped at a boundary as dominated or over the per-boundary bound
 */
public record Decision(SelectionMode mode, DecisionReason reason, boolean alternativeExecuted, Optional<Prediction> fixed,
        Optional<Prediction> alternative, String alternativeSummary, int alternativesEvaluated, int alternativesPruned) {
    public Decision {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(fixed, "fixed");
        Objects.requireNonNull(alternative, "alternative");
        Objects.requireNonNull(alternativeSummary, "alternativeSummary");
        if (alternativeExecuted && (mode != SelectionMode.COST_DRIVEN || reason != DecisionReason.SWITCH)) {
            throw new IllegalArgumentException("an alternative is executed only in COST_DRIVEN mode on a SWITCH decision");
        }
        if (alternativesEvaluated < 0 || alternativesPruned < 0) {
            throw new IllegalArgumentException("counts must be >= 0");
        }
    }

    /** The prediction of the executed routes, if any. */
    public Optional<Prediction> executed() {
        return alternativeExecuted ? alternative : fixed;
    }
}
