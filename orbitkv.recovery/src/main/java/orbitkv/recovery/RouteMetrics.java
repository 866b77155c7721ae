package orbitkv.recovery;

import java.util.Map;

/**
 * A snapshot of route-selection counters, plain records for whoever owns the metrics registry (no metrics library
 * types; closed label sets only: route kind, refusal, decision, stop; DIAG-2).
 *
 * @param plans {@code plan} calls
 * @param restores {@code restore} calls
 * @param byKind per route kind: executed routes and outcomes
 * @param refusals admission refusals by reason
 * @param replans replans by the refusal that caused them
 * @param decisions first-plan decisions by reason
 * @param stops restores by final stop
 * @param observationsEvicted observations evicted from full class windows
 * @param peersEvicted peers evicted from the cost model (over the peer bound)
 * @param tracesSampled traces offered to the JSONL file
 * @param traceLinesWritten lines written to it
 * @param traceFileRefused traces refused because the file reached a bound
 * @param traceFileErrors write errors (the file is closed after the first)
 * @param loadAccepted load summaries stored
 * @param loadRefused load summaries refused (older incarnation)
 * @param loadEvicted load summaries evicted (store full)
 * @param loadExpired load summaries expired by receipt age
 * @param drainPending submitted routes not drained yet (resources still held)
 */
public record RouteMetrics(long plans, long restores, Map<RouteKind, KindCounts> byKind, Map<AdmissionRefusal, Long> refusals,
        Map<AdmissionRefusal, Long> replans, Map<DecisionReason, Long> decisions, Map<PrefixStop, Long> stops,
        long observationsEvicted, long peersEvicted, long tracesSampled, long traceLinesWritten, long traceFileRefused,
        long traceFileErrors, long loadAccepted, long loadRefused, long loadEvicted, long loadExpired, long drainPending) {
    public RouteMetrics {
        byKind = Map.copyOf(byKind);
        refusals = Map.copyOf(refusals);
        replans = Map.copyOf(replans);
        decisions = Map.copyOf(decisions);
        stops = Map.copyOf(stops);
    }

    /**
     * Per route kind.
     *
     * @param executed routes submitted
     * @param ready routes host-ready
     * @param payloadFailures routes ended by a payload failure
     * @param timedOut routes still in flight at the deadline
     * @param refused routes refused before submission
     * @param bytesReady payload bytes delivered
     */
    public record KindCounts(long executed, long ready, long payloadFailures, long timedOut, long refused, long bytesReady) {
        public KindCounts {
            if (executed < 0 || ready < 0 || payloadFailures < 0 || timedOut < 0 || refused < 0 || bytesReady < 0) {
                throw new IllegalArgumentException("counts must be >= 0");
            }
        }
    }
}
