package orbitkv.transfer;

/** How a READ moved the bytes: the two backends behind {@link TransferEngine} (a closed label set). */
public enum Backend {
    /** The source's TCP data listener (Netty native transport; zero-copy send from the arena or sendfile). */
    TCP,
    /** A same-host copy from the source's DRAM arena, mapped read-only by the requester. */
    SHARED_MEMORY
}
