package orbitkv.transfer;

/** Which deadline closed a source's data connection (issue 33; a closed label set). */
public enum DataConnectionTimeout {
    /** A READ request frame did not arrive in full within {@code dataHeaderTimeoutMs} of its first byte. */
    HEADER,
    /** Neither input nor output made progress for {@code dataIdleTimeoutMs}. */
    IDLE
}
