package orbitkv.transfer.frame;

import orbitkv.transfer.DataRefusal;

/** The status byte of a data channel response (docs/transfer.md). */
public enum DataStatus {
    OK(0, null),
    GRANT_UNKNOWN(1, DataRefusal.GRANT_UNKNOWN),
    BLOCK_NOT_GRANTED(2, DataRefusal.BLOCK_NOT_GRANTED),
    ALREADY_READ(3, DataRefusal.ALREADY_READ),
    EGRESS_LIMIT(4, DataRefusal.EGRESS_LIMIT),
    MALFORMED(5, DataRefusal.MALFORMED),
    CLOSED(6, DataRefusal.CLOSED),
    SOURCE_READ_ERROR(7, DataRefusal.SOURCE_READ_ERROR),
    NOT_BOUND(8, DataRefusal.NOT_BOUND),
    BAD_SECRET(9, DataRefusal.BAD_SECRET),
    PEER_IDENTITY_MISMATCH(10, DataRefusal.PEER_IDENTITY_MISMATCH);

    private final byte code;
    private final DataRefusal refusal;

    DataStatus(int code, DataRefusal refusal) {
        this.code = (byte) code;
        this.refusal = refusal;
    }

    public byte code() {
        return code;
    }

    /** The refusal this status reports; null for {@link #OK}. */
    public DataRefusal refusal() {
        return refusal;
    }

    public static DataStatus of(DataRefusal refusal) {
        for (DataStatus s : values()) {
            if (s.refusal == refusal) {
                return s;
            }
        }
        throw new IllegalArgumentException("no status for " + refusal);
    }

    /** The status with this code, or null. */
    public static DataStatus of(byte code) {
        for (DataStatus s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        return null;
    }
}
