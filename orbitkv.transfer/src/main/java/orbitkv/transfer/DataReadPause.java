package orbitkv.transfer;

/**
 * Why a source's data connection stopped reading its socket for a while (issue 33; backpressure, never a
 * refusal): a closed label set. Reading resumes when the cause clears.
 */
public enum DataReadPause {
    /** {@code dataReadsQueuedPerConnectionMax} READs are decoded and their answers not yet written out. */
    READS_QUEUED_MAX,
    /** The connection's outbound buffer is above its high-water mark (the requester reads slower than we answer). */
    NOT_WRITABLE
}
