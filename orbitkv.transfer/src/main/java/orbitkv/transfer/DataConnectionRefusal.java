package orbitkv.transfer;

/**
 * Why a source's data listener closed a connection as soon as it was accepted (issue 33; BND-1): a closed label
 * set. A refused connection never reads a byte.
 */
public enum DataConnectionRefusal {
    /** The listener already holds {@code dataConnectionsMax} connections. */
    CONNECTIONS_MAX,
    /** The peer's IP address already holds {@code dataConnectionsPerAddressMax} connections. */
    CONNECTIONS_PER_ADDRESS_MAX
}
