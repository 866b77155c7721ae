package orbitkv.transfer;

import java.util.Objects;

/** The source's answer for one requested block, in request order. */
public sealed interface BlockResult {
    BlockRef ref();

    /**
     * Pinned at the source for the grant's lifetime.
     *
     * @param lengthBytes the payload length
     * @param crc32c the payload's CRC32C computed when it was saved; every READ is verified against it
     */
    record Granted(BlockRef ref, long lengthBytes, int crc32c) implements BlockResult {
        public Granted {
            Objects.requireNonNull(ref, "ref");
            if (lengthBytes < 0) {
                throw new IllegalArgumentException("lengthBytes must be >= 0, got " + lengthBytes);
            }
        }
    }

    /**
     * Not pinned; request-local evidence (ROUTE-7).
     *
     * @param reason a block-level reason
     * @param currentSequence for {@link RefusalReason#STALE_GENERATION}, the current residency sequence; else 0
     * @param detail what the source found
     */
    record Refused(BlockRef ref, RefusalReason reason, long currentSequence, String detail) implements BlockResult {
        public Refused {
            Objects.requireNonNull(ref, "ref");
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
            if (reason.level() != RefusalReason.Level.BLOCK) {
                throw new IllegalArgumentException(reason + " is not a block-level refusal");
            }
            if (currentSequence < 0) {
                throw new IllegalArgumentException("currentSequence must be >= 0, got " + currentSequence);
            }
        }
    }
}
