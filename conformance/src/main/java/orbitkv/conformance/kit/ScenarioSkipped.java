package orbitkv.conformance.kit;

/** Thrown by a scenario that cannot run against this target; carries its verdict and reason. */
final class ScenarioSkipped extends Exception {
    private final Verdict verdict;

    private ScenarioSkipped(Verdict verdict) {
        super(verdict.detail(), null, false, false);
        this.verdict = verdict;
    }

    static ScenarioSkipped notObservable(String why) {
        return new ScenarioSkipped(new Verdict.NotObservable("not observable black-box: " + why));
    }

    static ScenarioSkipped notApplicable(String why) {
        return new ScenarioSkipped(new Verdict.NotApplicable("not applicable: " + why));
    }

    Verdict verdict() {
        return verdict;
    }
}
