package orbitkv.recovery;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import orbitkv.index.Coverage;

/**
 * The bounded explanation of one restore (ROUTE-3; the design's route-policy diagnostics): the demand, the
 * evidence it was planned on, the eligible sources, the decision with its predictions and evidence age, every
 * admission outcome, every replan reason, the actual readiness and what had not drained when it was answered.
 * {@link #header()} is the compact form for the {@code X-OrbitKV-Route} response header (at most
 * {@value #HEADER_BYTES_MAX} ASCII bytes); the record itself is the structured form for paginated status and the
 * sampled JSONL file.
 *
 * @param id this selection's sequence number of the trace (paging token)
 * @param demandKeys keys demanded
 * @param target completion target name ({@code host})
 * @param deadlineBudgetNanos deadline minus the request start (negative if it had already passed)
 * @param staleHintsAllowed the demand's stale-hint rule
 * @param coverage the lookup's coverage state
 * @param viewGeneration the lookup's view generation
 * @param eligibleSources distinct eligible sources in the first plan's prefix
 * @param plannedPrefixKeys the first plan's recoverable prefix
 * @param plannedStop why the first plan's prefix stops
 * @param decision the first plan's decision (predictions included)
 * @param routes attempted routes in order, at most {@value #ROUTES_MAX}
 * @param routesOmitted attempted routes beyond {@value #ROUTES_MAX}
 * @param replans the refusal that caused each replan, in order (at most the policy's replans)
 * @param evidenceAgeNanos age of the stalest cost estimate behind the executed prediction
 * @param predictionErrorNanos actual minus predicted readiness when the first plan ran as planned with a prediction
 * @param loadAgeNanos receipt age of the freshest load summary of a chosen peer
 * @param restoredKeys keys host-ready and delivered (a prefix of the demand)
 * @param stop why the restored prefix ends
 * @param readyNanos from the request start to the last delivered route's readiness (0 when nothing was delivered)
 * @param drainPending submitted routes whose physical drain had not happened when the restore returned
 * @param lane the demand's network constraint against the first plan's peer routes (issue 39 item 6), empty without
 *     one or without a peer route
 */
public record RouteTrace(long id, int demandKeys, String target, long deadlineBudgetNanos, boolean staleHintsAllowed,
        Coverage coverage, long viewGeneration, int eligibleSources, int plannedPrefixKeys, PrefixStop plannedStop,
        Decision decision, List<TracedRoute> routes, int routesOmitted, List<AdmissionRefusal> replans,
        OptionalLong evidenceAgeNanos, OptionalLong predictionErrorNanos, OptionalLong loadAgeNanos, int restoredKeys,
        PrefixStop stop, long readyNanos, int drainPending, Optional<LaneNeed> lane) {
    /** Bound of {@link #header()} in bytes. */
    public static final int HEADER_BYTES_MAX = 512;
    /** Routes kept in one trace. */
    public static final int ROUTES_MAX = 32;

    /**
     * The network constraint as the first plan met it (ROUTE-3, issue 39 item 6).
     *
     * @param headroom the demand's lane headroom
     * @param needBytes the most one of the plan's peer routes takes from the lane ({@link LaneHeadroom#needBytes})
     */
    public record LaneNeed(LaneHeadroom headroom, long needBytes) {
        public LaneNeed {
            Objects.requireNonNull(headroom, "headroom");
        }

        /** The plan has a peer route the lane cannot take: it was predicted refused. */
        public boolean blocked() {
            return needBytes > headroom.freeBytes();
        }

        /** {@code lo/rx:free=N:need=M[:blocked]}. */
        public String compact() {
            return headroom + ":need=" + needBytes + (blocked() ? ":blocked" : "");
        }
    }

    public RouteTrace {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(coverage, "coverage");
        Objects.requireNonNull(plannedStop, "plannedStop");
        Objects.requireNonNull(decision, "decision");
        Objects.requireNonNull(evidenceAgeNanos, "evidenceAgeNanos");
        Objects.requireNonNull(predictionErrorNanos, "predictionErrorNanos");
        Objects.requireNonNull(loadAgeNanos, "loadAgeNanos");
        Objects.requireNonNull(stop, "stop");
        Objects.requireNonNull(lane, "lane");
        routes = List.copyOf(routes);
        replans = List.copyOf(replans);
        if (routes.size() > ROUTES_MAX || routesOmitted < 0) {
            throw new IllegalArgumentException("a trace keeps at most " + ROUTES_MAX + " routes");
        }
    }

    /** A trace without a network constraint. */
    public RouteTrace(long id, int demandKeys, String target, long deadlineBudgetNanos, boolean staleHintsAllowed,
            Coverage coverage, long viewGeneration, int eligibleSources, int plannedPrefixKeys, PrefixStop plannedStop,
            Decision decision, List<TracedRoute> routes, int routesOmitted, List<AdmissionRefusal> replans,
            OptionalLong evidenceAgeNanos, OptionalLong predictionErrorNanos, OptionalLong loadAgeNanos,
            int restoredKeys, PrefixStop stop, long readyNanos, int drainPending) {
        this(id, demandKeys, target, deadlineBudgetNanos, staleHintsAllowed, coverage, viewGeneration, eligibleSources,
                plannedPrefixKeys, plannedStop, decision, routes, routesOmitted, replans, evidenceAgeNanos,
                predictionErrorNanos, loadAgeNanos, restoredKeys, stop, readyNanos, drainPending, Optional.empty());
    }

    /**
     * The compact form, ASCII, at most {@value #HEADER_BYTES_MAX} bytes: space-separated {@code name=value} fields
     * after a version tag, routes last (dropped from the end, with {@code +N} for the dropped count, when the bound
     * would be exceeded). Documented in docs/recovery.md.
     */
    public String header() {
        StringBuilder b = new StringBuilder(256);
        b.append("v1 k=").append(demandKeys).append(" r=").append(restoredKeys).append(" stop=").append(stop.traceName())
                .append(" plan=").append(plannedPrefixKeys).append(':').append(plannedStop.traceName())
                .append(" cov=").append(coverageName(coverage))
                .append(" sel=").append(decision.mode().name().toLowerCase(Locale.ROOT).replace('_', '-')).append(':')
                .append(decision.reason().traceName());
        if (decision.alternativeExecuted()) {
            b.append(":executed");
        }
        b.append(" src=").append(eligibleSources).append(" evals=").append(decision.alternativesEvaluated());
        decision.executed().ifPresent(p -> b.append(" pred=").append(micros(p.meanNanos())).append("us+-")
                .append(micros(p.errorNanos())).append("us"));
        predictionErrorNanos.ifPresent(e -> b.append(" err=").append(micros(e)).append("us"));
        evidenceAgeNanos.ifPresent(a -> b.append(" age=").append(a / 1_000_000).append("ms"));
        loadAgeNanos.ifPresent(a -> b.append(" load-age=").append(a / 1_000_000).append("ms"));
        lane.ifPresent(l -> b.append(" net=").append(l.compact()));
        if (!replans.isEmpty()) {
            b.append(" replan=");
            for (int i = 0; i < replans.size(); i++) {
                b.append(i == 0 ? "" : ",").append(replans.get(i).traceName());
            }
        }
        b.append(" t=").append(micros(readyNanos)).append("us drain=").append(drainPending);
        appendRoutes(b);
        if (b.length() > HEADER_BYTES_MAX) { // only reachable with pathological fields: cut, marked
            b.setLength(HEADER_BYTES_MAX - 3);
            b.append("...");
        }
        return b.toString();
    }

    private void appendRoutes(StringBuilder b) {
        if (routes.isEmpty()) {
            return;
        }
        b.append(" routes=");
        int shown = 0;
        for (TracedRoute r : routes) {
            String c = (shown == 0 ? "" : ",") + r.compact();
            int left = routes.size() - shown - 1 + routesOmitted;
            int reserve = left > 0 ? 6 : 0; // ",+NNNN"
            if (b.length() + c.length() + reserve > HEADER_BYTES_MAX) {
                break;
            }
            b.append(c);
            shown++;
        }
        int dropped = routes.size() - shown + routesOmitted;
        if (dropped > 0) {
            b.append(shown == 0 ? "+" : ",+").append(dropped);
        }
    }

    private static String coverageName(Coverage c) {
        return switch (c) {
            case CompleteAtWatermarks -> "complete";
            case PartialHints -> "partial";
            case Unavailable -> "unavailable";
        };
    }

    private static long micros(double nanos) {
        return Math.round(nanos / 1_000.0);
    }
}
