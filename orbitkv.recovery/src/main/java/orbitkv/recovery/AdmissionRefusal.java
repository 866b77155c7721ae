package orbitkv.recovery;

/**
 * Why a route was refused before its READ was submitted (ROUTE-7). The refusal's scope decides what becomes
 * request-local evidence for the replan; shared index rows are never touched.
 */
public enum AdmissionRefusal {
    /** The source holds the key at another generation (INV-3): exclude those replicas for this request. */
    STALE_GENERATION("stale-generation", Exclusion.KEYS, false),
    /** The source no longer holds the key: exclude those replicas for this request. */
    NOT_RESIDENT("not-resident", Exclusion.KEYS, false),
    /** The source's bounded pins are exhausted: exclude the source for this request. */
    PINS_EXHAUSTED("pins-exhausted", Exclusion.SOURCE, true),
    /** The source's egress cap refused the grant: exclude the source for this request. */
    EGRESS_CAP("egress-cap", Exclusion.SOURCE, true),
    /** The source incarnation is fenced, replaced or not admitted: exclude the source for this request. */
    SOURCE_FENCED("source-fenced", Exclusion.SOURCE, true),
    /** The source could not be reached or answered with a protocol error: exclude the source for this request. */
    UNREACHABLE("unreachable", Exclusion.SOURCE, true),
    /**
     * This Manager's receive credits (its in-flight byte window for peer READs) could not be had (ROUTE-11): nothing
     * is excluded; the replan may pick the same route once credits return.
     */
    RECEIVE_CREDITS("receive-credits", Exclusion.NONE, false),
    /**
     * This Manager's memory for restore responses (destinations held at once) could not be had: nothing is
     * excluded; the replan may pick the same route once other requests free memory.
     */
    RESPONSE_MEMORY("response-memory", Exclusion.NONE, false);

    /** What a refusal excludes for the rest of the request. */
    public enum Exclusion {
        /** The refused keys' replicas at the refusing source. */
        KEYS,
        /** Every replica at the refusing source (owner and medium). */
        SOURCE,
        /** Nothing. */
        NONE
    }

    private final String traceName;
    private final Exclusion scope;
    private final boolean pathRisk;

    AdmissionRefusal(String traceName, Exclusion scope, boolean pathRisk) {
        this.traceName = traceName;
        this.scope = scope;
        this.pathRisk = pathRisk;
    }

    public String traceName() {
        return traceName;
    }

    public Exclusion scope() {
        return scope;
    }

    /** True iff the refusal is a property of the path and is kept as a {@link ObservationOutcome#REFUSED} observation. */
    public boolean pathRisk() {
        return pathRisk;
    }
}
