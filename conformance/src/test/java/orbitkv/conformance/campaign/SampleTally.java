package orbitkv.conformance.campaign;

import java.util.EnumMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * What the campaign's sampler did with each sample (issue 34 item 7): judged (the properties were checked on its
 * answers, or a live node's 5xx was recorded as an {@link Property#ANSWERS} violation) or aborted, by named
 * {@link Cause}. Before, every failed read was swallowed and the sample count still grew, so a Manager answering
 * 500 dropped every sample unseen. A schedule that judged fewer than the configured minimum fails
 * ({@link Property#SAMPLED}). Thread-safe.
 */
final class SampleTally {
    /** Why a sample was not judged. Each says the answers cannot be compared, never that they were wrong. */
    enum Cause {
        /** The node was killed, SIGSTOPped or restarted during the sample (its answer, if any, proves nothing). */
        NODE_DOWN,
        /** A live node's request failed in transport or timed out (load; a stopped process is NODE_DOWN). */
        NO_ANSWER,
        /** A live node refused by a named 4xx (for example 429 while the workload fills its request slots). */
        REFUSED,
        /** The requester healed (new incarnation) between its two statuses: two different indexes. */
        REQUESTER_HEALED;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    private long judged;
    private final Map<Cause, Long> aborted = new EnumMap<>(Cause.class);

    synchronized void judged() {
        judged++;
    }

    synchronized void aborted(Cause cause) {
        aborted.merge(cause, 1L, Long::sum);
    }

    synchronized long judgedCount() {
        return judged;
    }

    synchronized long abortedCount(Cause cause) {
        return aborted.getOrDefault(cause, 0L);
    }

    /** {@code samples=J aborted={node-down=n,...}} for the campaign line. */
    synchronized String summary() {
        StringJoiner j = new StringJoiner(",", "{", "}");
        for (Cause c : Cause.values()) {
            j.add(c.label() + "=" + aborted.getOrDefault(c, 0L));
        }
        return "samples=" + judged + " aborted=" + j;
    }

    /** Null if at least {@code minimum} samples were judged, else the reason the schedule fails. */
    synchronized String shortfall(long minimum) {
        if (judged >= minimum) {
            return null;
        }
        return "judged " + judged + " samples, fewer than the minimum " + minimum
                + " (orbitkv.campaign.min-judged-samples); " + summary();
    }
}
