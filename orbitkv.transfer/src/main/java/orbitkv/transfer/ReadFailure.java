package orbitkv.transfer;

/**
 * Why an admitted READ failed (a closed label set). The destination range is zero-filled after the READ
 * physically stopped; never retried blindly (ROUTE-8).
 */
public enum ReadFailure {
    /** The received bytes do not match the grant's CRC32C. */
    CHECKSUM_MISMATCH,
    /** The data connection closed or failed before the whole block arrived. */
    CONNECTION_LOST,
    /** The data connection could not be opened. */
    CONNECT_FAILED,
    /** The source answered something the framing does not allow (bad magic, length, request id). */
    PROTOCOL_VIOLATION,
    /** Copying from the mapped arena faulted (the file shrank or the mapping failed). */
    SHARED_MEMORY_FAULT,
    /** A shared-memory copy finished after the grant's local deadline: its bytes are not trusted. */
    GRANT_EXPIRED_DURING_READ,
    /** The source could not read its own stored bytes (a missing or short SSD file). */
    SOURCE_READ_ERROR
}
