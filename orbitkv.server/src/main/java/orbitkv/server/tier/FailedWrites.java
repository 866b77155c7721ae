package orbitkv.server.tier;

import java.util.TreeSet;

/**
 * The failed writes of an SSD tier that a sync must answer for (issue 33: {@code /cache/sync} never answers 200 for
 * SSD copies that were not written): the tickets of recent failed writes, bounded by {@link #TRACKED_MAX} (the oldest
 * dropped first, its ticket kept so a sync whose window it falls in still counts it), and the first failed ticket of
 * the current fault episode. Guarded by the owning tier's table lock: every method runs under it.
 */
final class FailedWrites {
    /** Failed write tickets remembered for sync answers. */
    static final int TRACKED_MAX = 1024;

    private final TreeSet<Long> tickets = new TreeSet<>();
    private long droppedMax;
    /** The first failed ticket of the current fault episode, 0 while the last completed write succeeded. */
    private long failingSince;

    /** A completed write: failed, or written (a success ends the episode); neither for a superseded one. */
    void completed(long ticket, boolean failed, boolean written) {
        if (failed) {
            tickets.add(ticket);
            if (tickets.size() > TRACKED_MAX) {
                droppedMax = Math.max(droppedMax, tickets.pollFirst());
            }
            failingSince = failingSince == 0 ? ticket : failingSince;
        } else if (written) {
            failingSince = 0;
        }
    }

    /**
     * Failed writes among tickets {@code (from, to]}, widened to the whole current episode while the tier is still
     * failing; one more when a dropped ticket falls in the window.
     */
    long countIn(long from, long to) {
        long since = failingSince != 0 ? Math.min(from, failingSince - 1) : from;
        long failed = to <= since ? 0 : tickets.subSet(since + 1, true, to, true).size();
        if (droppedMax > since) {
            failed++; // at least one more, no longer listed
        }
        return failed;
    }
}
