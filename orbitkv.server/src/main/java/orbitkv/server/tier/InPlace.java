package orbitkv.server.tier;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The outcome of verifying a pinned payload where it is stored ({@link LocalTiers#verifyInPlace}): a restore
 * sends a verified DRAM payload straight from the arena instead of copying it into the response.
 */
public sealed interface InPlace {
    /**
     * The stored bytes match the CRC32C saved with them; {@code bytes} is a read-only view of exactly the payload,
     * valid only while the pin it came from is held.
     */
    record Verified(ByteBuffer bytes) implements InPlace {
        public Verified {
            Objects.requireNonNull(bytes, "bytes");
            if (!bytes.isReadOnly() || !bytes.isDirect()) {
                throw new IllegalArgumentException("an in-place payload is a read-only view of off-heap memory");
            }
        }
    }

    /** The stored bytes are broken: the residence was evicted through the journal and counted. */
    record Corrupt(String reason, String detail) implements InPlace {
        public Corrupt {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /** The pinned bytes do not live in an arena (an SSD file): the caller copies them with {@code copyTo}. */
    record NotInArena() implements InPlace {}
}
