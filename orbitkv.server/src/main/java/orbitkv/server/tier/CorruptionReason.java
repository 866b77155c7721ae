package orbitkv.server.tier;

import java.util.Locale;

/**
 * Why a stored block failed its check on a read (issue 20 item 2): the names are the
 * {@link orbitkv.transfer.PayloadSource.CopyOutcome.Corrupt#reason()} values, the restore's stop detail and
 * the {@code reason} label of {@code orbitkv_tier_corrupt_total}.
 */
public enum CorruptionReason {
    /** The bytes read do not match the CRC32C computed at save time. */
    CHECKSUM_MISMATCH,
    /** The SSD block file is gone. */
    MISSING_FILE,
    /** The SSD block file is shorter than the block. */
    TRUNCATED_FILE,
    /** The SSD block file is longer than the block (something appended to it). */
    SIZE_MISMATCH,
    /** Reading the SSD block file failed. */
    IO_ERROR;

    /** The lowercase wire name, e.g. {@code checksum-mismatch}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
