package orbitkv.conformance.kit;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import orbitkv.conformance.peer.AdversarialSource;
import orbitkv.inventory.Namespace;
import orbitkv.membership.Endpoint;
import orbitkv.membership.MembershipView;

/**
 * The adversarial table run in-process (issue 34 item 6): each session row of
 * {@code tables/session/adversarial.table} is executed by the kit's own scenario classes ({@link SourceScenarios},
 * {@link RequesterScenarios}, under a {@link RowRunner} deadline) against a fresh {@link InProcessTarget}, exactly as
 * {@code orbitkv conformance} runs them against a Manager. Only the target's ports differ; the crafted traffic, the
 * wire reading and every check are the kit's. {@code AdversarialTableTest} runs every row; {@code KitBlackBoxTest}
 * compares the kit's black-box verdicts with these; the mutant test runs them through a broken {@link Wiring}.
 */
public final class InProcessTable {
    /** Every single wait of a row (the kit's {@code --wait-ms}). */
    public static final Duration WAIT = Duration.ofSeconds(5);
    /** A row's hard deadline (the kit's {@code --row-deadline-ms}). */
    public static final Duration ROW_DEADLINE = Duration.ofSeconds(60);
    static final String PREFIX = "ipk";
    static final String NAMESPACE = "ipk-ns";

    private InProcessTable() {}

    /**
     * One session row of the table.
     *
     * @param id {@code side/scenario}
     * @param expected the expected outcome token
     * @param rules the rule IDs the row cites
     * @param permitted true for a {@code may:} row (the outcome is this implementation's permitted choice)
     */
    public record Row(String id, String expected, List<String> rules, boolean permitted) {
        /** The dynamic test's name: the rule IDs, the row and its expected outcome. */
        public String name() {
            return String.join(" ", rules) + " " + id + " -> " + expected;
        }

        public String side() {
            return id.substring(0, id.indexOf('/'));
        }
    }

    /**
     * One row's verdict, as the kit reports it.
     *
     * @param word PASS, FAIL, N/A, NOT-OBSERVABLE, POLICY-PASS or POLICY-DIFFERS
     * @param detail the outcome or the failed check
     */
    public record Result(String word, String detail) {
        /** PASS, or POLICY-PASS: a {@code may:} row whose outcome is the one this implementation chooses. */
        public boolean passed() {
            return word.equals("PASS") || word.equals("POLICY-PASS");
        }

        @Override
        public String toString() {
            return word + " " + detail;
        }
    }

    /**
     * How the kit and the in-process target are connected: directly ({@link #DIRECT}), or through a broken piece
     * (a wire rewrite in front of either listener, a broken membership view under the session server).
     */
    public interface Wiring {
        /** What the kit's requesters dial instead of the target's peer listener {@code targetPeer}. */
        default Endpoint beforeTarget(Endpoint targetPeer) throws IOException {
            return targetPeer;
        }

        /** What the kit's members advertise (the target's subscriber dials it) instead of the kit's listener. */
        default Endpoint beforeKit(Endpoint kitListener) throws IOException {
            return kitListener;
        }

        /** What the target's session server sees of each membership view. */
        default MembershipView serverView(MembershipView view) {
            return view;
        }

        /** Each row's hard deadline. */
        default Duration rowDeadline() {
            return ROW_DEADLINE;
        }
    }

    /** The kit and the target connected directly. */
    public static final Wiring DIRECT = new Wiring() {};

    /** The table's session rows (its {@code source} and {@code requester} rows), in table order. */
    public static List<Row> rows() {
        return ScenarioRow.load().stream().filter(r -> !r.side().equals("transfer"))
                .map(r -> new Row(r.id(), r.expected(), r.rules(), r.permission().isPresent())).toList();
    }

    /** Runs {@code row} against a fresh in-process target, connected directly. */
    public static Result run(Row row) throws Exception {
        return run(row, DIRECT);
    }

    /** Runs {@code row} against a fresh in-process target connected through {@code wiring}. */
    public static Result run(Row row, Wiring wiring) throws Exception {
        ScenarioRow r = ScenarioRow.load().stream().filter(x -> x.id().equals(row.id())).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no table row " + row.id()));
        AdversarialSource listener = AdversarialSource.start();
        try (InProcessTarget target = new InProcessTarget(PREFIX, wiring.beforeKit(listener.endpoint()), wiring::serverView);
                SessionRouter router = new SessionRouter(listener, target.incarnation(), WAIT)) {
            ScenarioProfile profile = new ScenarioProfile(wiring.beforeTarget(target.peer()), Optional.empty(), PREFIX, WAIT,
                    InProcessTarget.FRAME_BYTES_MAX, InProcessTarget.FRAME_BYTES_MAX, InProcessTarget.LIVENESS_MS,
                    OptionalInt.of(InProcessTarget.SOURCE_SESSIONS_MAX));
            Duration budget = wiring.rowDeadline();
            Verdict v = r.side().equals("source") ? source(r, budget, profile, target) : requester(r, budget, profile, target, router);
            return new Result(v.word(), v.detail());
        } finally {
            listener.close();
        }
    }

    private static Verdict source(ScenarioRow r, Duration budget, ScenarioProfile profile, InProcessTarget target)
            throws InterruptedException {
        SourceScenarios s = new SourceScenarios(profile, target, target, target, target.incarnation(), NAMESPACE, Optional.of(target));
        s.setUp();
        return RowRunner.run(r, budget, (deadline, seen) -> s.run(r, deadline, seen), s::cancel);
    }

    private static Verdict requester(ScenarioRow r, Duration budget, ScenarioProfile profile, InProcessTarget target,
            SessionRouter router) throws InterruptedException {
        RequesterScenarios s = new RequesterScenarios(profile, target, target, router, target.incarnation(), Namespace.utf8(NAMESPACE),
                Optional.of(target));
        return RowRunner.run(r, budget, (deadline, seen) -> s.run(r, deadline, seen), s::cancel);
    }
}
