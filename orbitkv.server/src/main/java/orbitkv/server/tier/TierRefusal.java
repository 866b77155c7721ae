package orbitkv.server.tier;

/** Why a tier refused an operation; each is counted and reported, never a silent drop (INV-9). */
public enum TierRefusal {
    /** A single block is larger than the whole tier. */
    BLOCK_EXCEEDS_TIER,
    /** Not enough space even after evicting every unpinned block (everything left is pinned or reserved). */
    NO_EVICTABLE_SPACE,
    /** The bounded pin count is exhausted. */
    PINS_EXHAUSTED,
    /** The SSD write queue is full (count or bytes). */
    WRITE_QUEUE_FULL,
    /** The SSD write or read failed with an I/O error. */
    IO_ERROR,
    /** The tier is closed. */
    CLOSED,
    /**
     * The filesystem under the DRAM arena could not back a page the save wrote (a tmpfs filled by others after the
     * start; issue 33): the save is refused, nothing of it stored, the fault logged and /health degraded.
     */
    BACKING_STORE_FULL
}
