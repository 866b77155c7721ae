package orbitkv.recovery;

import java.util.Objects;
import orbitkv.membership.Incarnation;

/**
 * A peer's bounded resource summary (ROUTE-9): disposable evidence about load, tagged with the incarnation
 * that measured it and its measurement window, expired by local receipt age. Never a grant, never a promise
 * of a queue wait, never written to etcd (MEM-4). It rides on existing peer responses: the Manager builds it
 * from the {@code SourceLoad} on each transfer Authorize answer (docs/transfer.md "Load summary").
 *
 * @param owner the incarnation that measured it
 * @param windowMs the measurement window, 1..{@value #WINDOW_MS_MAX} ms
 * @param grantsOutstanding grants the source held at the end of the window
 * @param pinnedBytes bytes pinned at the end of the window
 * @param egressQueuedBytes bytes queued for egress at the end of the window
 */
public record LoadSummary(Incarnation owner, long windowMs, int grantsOutstanding, long pinnedBytes, long egressQueuedBytes) {
    /** Longest accepted measurement window. */
    public static final long WINDOW_MS_MAX = 60_000;

    public LoadSummary {
        Objects.requireNonNull(owner, "owner");
        if (windowMs < 1 || windowMs > WINDOW_MS_MAX) {
            throw new IllegalArgumentException("load window must be 1.." + WINDOW_MS_MAX + " ms, got " + windowMs);
        }
        if (grantsOutstanding < 0 || pinnedBytes < 0 || egressQueuedBytes < 0) {
            throw new IllegalArgumentException("load figures must be >= 0");
        }
    }

    /** A retained summary and its local receipt age. */
    public record Aged(LoadSummary summary, long ageNanos) {
        public Aged {
            Objects.requireNonNull(summary, "summary");
        }
    }

    /** What {@code recordLoad} did with a summary. */
    public enum Recorded {
        /** Stored (first for its node, or a newer summary of the same incarnation). */
        ACCEPTED,
        /** Stored, replacing an older incarnation's summary of the same node. */
        REPLACED_OLDER_INCARNATION,
        /** Stored after evicting the summary with the oldest receipt (the store was full). */
        ACCEPTED_EVICTED_OLDEST,
        /** Refused: the node already has a summary from a newer incarnation (counted). */
        REFUSED_OLDER_INCARNATION
    }
}
