package orbitkv.transfer;

/**
 * Why a READ was refused before any byte reached its destination (a closed label set). The destination is
 * untouched; admission resources (credits) are not held.
 */
public enum ReadRefusal {
    /** The requester's receive window ({@code receiveInFlightBytesMax}) cannot take this block now. */
    CREDITS_EXHAUSTED,
    /** {@code readsInFlightMax} READs are in flight. */
    READS_IN_FLIGHT_LIMIT,
    /** {@code connectionsPerSourceMax} data connections to this source are busy. */
    CONNECTIONS_EXHAUSTED,
    /** The destination is smaller than the block. */
    DESTINATION_TOO_SMALL,
    /** The index names no granted block of this grant. */
    BLOCK_NOT_GRANTED,
    /** This block of this grant was already READ (no blind retry after payload failure, ROUTE-8). */
    ALREADY_READ,
    /** The grant's local deadline passed. */
    GRANT_EXPIRED,
    /** The grant was released by this requester. */
    GRANT_RELEASED,
    /** The engine is closed. */
    ENGINE_CLOSED,
    /** The source does not know the grant (released, expired, excluded) or it ended. */
    SOURCE_GRANT_ENDED,
    /** The source's egress cap ({@code sourceEgressInFlightBytesMax}) cannot take this block now. */
    SOURCE_EGRESS_LIMIT,
    /** The source is closing or fenced. */
    SOURCE_CLOSED
}
