package orbitkv.transfer;

/** Why a source's data listener refused a READ request before sending payload (a closed label set). */
public enum DataRefusal {
    /** No such grant: released, expired, excluded, or never issued. */
    GRANT_UNKNOWN,
    /** The block index is out of range or names a refused block. */
    BLOCK_NOT_GRANTED,
    /** This block of this grant was already sent. */
    ALREADY_READ,
    /** The egress cap cannot take the block now. */
    EGRESS_LIMIT,
    /**
     * The node-wide account of the source NIC's egress ({@link EgressAccount}: the transmit lane of the Manager's
     * node-local admission window) cannot take the block now (issue 39 item 2). Sent as {@code EGRESS_LIMIT} on the
     * wire (the block may be asked again); counted under its own name.
     */
    EGRESS_NIC_WINDOW,
    /** The request frame is malformed (magic, version, type); the connection is closed. */
    MALFORMED,
    /** The source is closing or fenced. */
    CLOSED,
    /** The pinned bytes could not be opened for sending (a missing SSD file). */
    SOURCE_READ_ERROR,
    /** The connection is not bound to the READ's grant: no BIND with its secret preceded it (issue 33). */
    NOT_BOUND,
    /** A BIND carried a wrong grant secret; the connection is closed. */
    BAD_SECRET,
    /**
     * Under TLS, a BIND came over a connection whose certificate names another node than the grant's requester;
     * the connection is closed.
     */
    PEER_IDENTITY_MISMATCH
}
