package orbitkv.server.incarnation;

import java.util.List;
import java.util.Objects;

/**
 * How a distributed Manager heals a fenced incarnation (issue 17 item 5), as status and metrics show it:
 * {@code membership.heal} in {@code /cache/metadata/status}, the {@code orbitkv_membership_heal*} families.
 *
 * @param enabled false with {@code --self-heal-disabled} (a fenced Manager then heals only by restart)
 * @param state "serving" (the current incarnation is not fenced), "healing" (fenced, attempts running),
 *     "stopped" (fenced for good: attempts exhausted, or the node id was taken by another process, or
 *     self-healing is disabled)
 * @param attempts heal attempts so far (each one registration try)
 * @param heals incarnations registered by a heal
 * @param lastError the last attempt's failure, or null
 * @param history the latest incarnations of this process, oldest first, at most {@value #HISTORY_MAX}
 */
public record HealReport(boolean enabled, String state, long attempts, long heals, String lastError,
                         List<Past> history) {
    /** Incarnations kept in {@link #history}. */
    public static final int HISTORY_MAX = 8;

    /**
     * One incarnation of this process.
     *
     * @param incarnation {@code node/epoch/uuid}
     * @param fencedCause why it was fenced, or null while it serves
     */
    public record Past(String incarnation, String fencedCause) {
        public Past {
            Objects.requireNonNull(incarnation, "incarnation");
        }
    }

    public HealReport {
        Objects.requireNonNull(state, "state");
        history = List.copyOf(history);
        if (history.size() > HISTORY_MAX) {
            throw new IllegalArgumentException("heal history is bounded to " + HISTORY_MAX + ", got " + history.size());
        }
    }
}
