package orbitkv.transfer;

/** Why a requester asks for bytes: a request waits for them, or they are speculative (prefetch). */
public enum Intent {
    /** A request is waiting for these bytes. */
    FOREGROUND,
    /** Speculative preparation: its pinned bytes are capped by {@code prefetchPinnedBytesTotalMax}. */
    PREFETCH
}
