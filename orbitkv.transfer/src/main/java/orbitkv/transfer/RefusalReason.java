package orbitkv.transfer;

/**
 * Why a source refused an Authorize request or one block of it (the wire enum {@code RefusalReason} of
 * {@code orbitkv.transfer.v1}; docs/transfer.md). A closed label set: metrics count refusals by it.
 * A request-level refusal takes no pin and changes no state on either side; a block-level refusal concerns
 * that block only and is request-local evidence for the requester (it never deletes shared index rows).
 */
public enum RefusalReason {
    PROTOCOL_MISMATCH(Level.REQUEST),
    CLUSTER_MISMATCH(Level.REQUEST),
    /** The expected source is another node, or a newer incarnation than this one. */
    WRONG_SOURCE_INCARNATION(Level.REQUEST),
    /** The expected source is an older incarnation of this node: the requester's evidence is stale. */
    STALE_SOURCE_INCARNATION(Level.REQUEST),
    /** The requester incarnation is not admitted by the source's membership view (unknown, replaced, fenced). */
    REQUESTER_NOT_ADMITTED(Level.REQUEST),
    /** The source's membership view is not valid: no remote admission (MEM-9). */
    MEMBERSHIP_SUSPENDED(Level.REQUEST),
    /** The source incarnation is fenced (INV-7). */
    SOURCE_FENCED(Level.REQUEST),
    TOO_MANY_KEYS(Level.REQUEST),
    REQUEST_TOO_LARGE(Level.REQUEST),
    MALFORMED_REQUEST(Level.REQUEST),
    UNKNOWN_ENUM_VALUE(Level.REQUEST),
    DUPLICATE_KEY(Level.REQUEST),
    SHUTTING_DOWN(Level.REQUEST),
    /**
     * Under peer mutual TLS, the requester incarnation names another node than the caller's certificate
     * ({@code orbitkv.membership.PeerIdentity}): one CA-signed certificate cannot pose as another member.
     */
    REQUESTER_IDENTITY_MISMATCH(Level.REQUEST),
    /** The block is resident at another residency sequence. */
    STALE_GENERATION(Level.BLOCK),
    NOT_RESIDENT(Level.BLOCK),
    /** A pin bound (count or bytes, per requester, in total, or the payload owner's own) is full. */
    PINS_EXHAUSTED(Level.BLOCK),
    /** The prefetch share of pinned bytes is full. */
    PREFETCH_LIMIT(Level.BLOCK),
    /** The block is larger than {@code blockBytesMax}. */
    BLOCK_TOO_LARGE(Level.BLOCK),
    /** The payload owner is closing. */
    SOURCE_CLOSED(Level.BLOCK);

    /** Whether a reason refuses a whole request or one block. */
    public enum Level {
        REQUEST,
        BLOCK
    }

    private final Level level;

    RefusalReason(Level level) {
        this.level = level;
    }

    public Level level() {
        return level;
    }
}
