package orbitkv.recovery;

/**
 * How the planner uses the cost model (ROUTE-6; the design's fixed vs shadow vs executed ablation, PERF-5).
 */
public enum SelectionMode {
    /** Always execute the fixed deterministic plan; no search. */
    FIXED,
    /**
     * Execute the fixed plan; run the search and the switch rule anyway and trace what the cost-driven policy
     * would have chosen. The shadow's prediction is never an observation.
     */
    SHADOW,
    /** Execute the cost-driven choice when the switch rule allows it, else the fixed plan. */
    COST_DRIVEN
}
