package orbitkv.transfer;

/** Whether, and why, a READ that preferred shared memory went over TCP (a closed label set). */
public enum SharedMemoryFallback {
    /** No fallback: shared memory served it, or it was not preferred. */
    NONE,
    /** Source and requester are on different hosts (boot ids differ), so the source named no arena. */
    OTHER_HOST,
    /** The block is on the source's SSD: only DRAM is shared; SSD blocks go over TCP (sendfile). */
    SSD_RESIDENT,
    /** The named arena could not be mapped, or the mapped file is not the one the source named (dev/inode). */
    ARENA_UNAVAILABLE
}
