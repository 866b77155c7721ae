package orbitkv.membership.etcd;

/**
 * The value of {@code epochs/<node_id>} and of the floor {@code epochs/@floor} (MEM-5): the last issued
 * epoch and the wall-clock time it was issued, {@code node_epoch = N\nissued_unix_ms = T\n}. The wall
 * time serves only the operator's inactive-node policy ({@code prune-epochs --inactive-for}); no
 * fencing decision reads it.
 *
 * @param epoch the last issued epoch, >= 1 (the floor may be 0 only before any prune)
 * @param issuedUnixMs wall-clock milliseconds when it was issued
 */
record EpochRecord(long epoch, long issuedUnixMs) {
    /** Issue time of a legacy epoch value (bare decimal): unknown, so the inactive-node policy never prunes it. */
    static final long UNKNOWN_ISSUE_TIME = 0;

    EpochRecord {
        if (epoch < 0) {
            throw new IllegalArgumentException("node_epoch must be >= 0, got " + epoch);
        }
    }

    String encode() {
        return "node_epoch = " + epoch + "\nissued_unix_ms = " + issuedUnixMs + "\n";
    }

    /**
     * Parses the canonical text.
     *
     * @throws IllegalArgumentException naming the malformed field
     */
    static EpochRecord parse(String text) {
        if (text.matches("[0-9]{1,18}")) {
            // An older binary's epoch key: a bare decimal. Its issue time is unknown (0): prune keeps it.
            return new EpochRecord(Long.parseLong(text), UNKNOWN_ISSUE_TIME);
        }
        String[] lines = text.split("\n", -1);
        if (lines.length != 3 || !lines[2].isEmpty()
                || !lines[0].startsWith("node_epoch = ") || !lines[1].startsWith("issued_unix_ms = ")) {
            throw new IllegalArgumentException("epoch record must be 'node_epoch = N\\nissued_unix_ms = T\\n', got '"
                    + text.replace("\n", "\\n") + "'");
        }
        try {
            return new EpochRecord(Long.parseLong(lines[0].substring(13)), Long.parseLong(lines[1].substring(17)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("epoch record holds a non-integer: " + text.replace("\n", "\\n"));
        }
    }
}
