package orbitkv.conformance.kit;

/**
 * What the kit concluded about one scenario against the target. Every row of the table gets exactly one
 * verdict; nothing is dropped silently.
 */
sealed interface Verdict {
    /** The short word printed in the report line. */
    String word();

    /** The reason or observed outcome printed after the rule IDs. */
    String detail();

    /** The target answered the expected outcome and every black-box check held. */
    record Passed(String detail) implements Verdict {
        public String word() {
            return "PASS";
        }
    }

    /** The target answered something else, or a check failed. */
    record Failed(String detail) implements Verdict {
        public String word() {
            return "FAIL";
        }
    }

    /** The scenario does not apply to this target (its configuration, or a policy row skipped on purpose). */
    record NotApplicable(String detail) implements Verdict {
        public String word() {
            return "N/A";
        }
    }

    /** The scenario needs control the kit does not take over a target it does not own. */
    record NotObservable(String detail) implements Verdict {
        public String word() {
            return "NOT-OBSERVABLE";
        }
    }

    /**
     * A policy row (the design says MAY or "need not"): the target made the choice this implementation
     * makes. Reported apart; never counts as a failure.
     */
    record PolicyPass(String detail) implements Verdict {
        public String word() {
            return "POLICY-PASS";
        }
    }

    /** A policy row where the target chose otherwise, which the design permits: reported, never failing. */
    record PolicyDiffers(String detail) implements Verdict {
        public String word() {
            return "POLICY-DIFFERS";
        }
    }
}
