package orbitkv.transfer;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * SPI implemented by the owner of payload bytes (the Manager's tiers): the one pin contract of this code
 * base. A pin names one exact residence generation {@code (StateKey, medium, residency_sequence)} of this
 * incarnation and succeeds only while that generation is the current residence (INV-2, INV-3). Local
 * restore and peer transfer both pin through it; the transfer module's authorizer adds its per-requester
 * and total bounds, grant expiry and membership exclusion on top.
 *
 * <p>Bounds and ownership (INV-9): the implementation bounds pins by count and bytes; running out is the
 * explicit {@link PinResult.PinLimit} refusal, never a wait. A pin's terminal owner is whoever holds the
 * {@link PinResult.Pinned}: it is released exactly once by {@link PinResult.Pinned#release()} (a second
 * release does nothing). Eviction, replacement or an explicit evict never frees pinned bytes: the residence
 * leaves the resident map at once (a journal delete), but its bytes stay valid and unmodified until the last
 * pin on them is released.
 *
 * <p>Integrity: every residence carries the CRC32C of its payload, computed once when it was saved
 * ({@link PinResult.Pinned#crc32c()}). Whoever moves the bytes verifies them against it after the copy, so a
 * corrupted copy becomes a named error, never wrong bytes.
 */
public interface PayloadSource {
    /**
     * Pins the bytes of {@code (key, medium)} iff its current residency sequence is exactly
     * {@code residencySequence}. Never blocks on I/O.
     */
    PinResult pin(StateKey key, Medium medium, long residencySequence);

    /** The outcome of {@link #pin}. */
    sealed interface PinResult {
        /**
         * Pinned: {@link #location()} stays valid and its bytes unmodified until {@link #release()}.
         * Implementations are thread-safe; release is idempotent.
         */
        non-sealed interface Pinned extends PinResult, AutoCloseable {
            StateKey key();

            Medium medium();

            long residencySequence();

            long sizeBytes();

            /** CRC32C ({@link java.util.zip.CRC32C}) of the payload, computed at save time. */
            int crc32c();

            /** Where the pinned bytes live: zero-copy senders read them in place. */
            PayloadLocation location();

            /**
             * Copies the whole payload into {@code dst} at its position, verifies it against
             * {@link #crc32c()}, and advances the position by {@link #sizeBytes()}. A read error, a short file
             * or a checksum mismatch is {@link CopyOutcome.Corrupt} (the destination's content is then
             * undefined and must not be exposed); the implementation also evicts the broken residence and
             * counts it.
             *
             * @throws java.nio.BufferOverflowException if {@code dst} has fewer than {@link #sizeBytes()} bytes remaining
             * @throws IllegalStateException if the pin was released
             */
            CopyOutcome copyTo(ByteBuffer dst);

            void release();

            /** Same as {@link #release()}. */
            @Override
            default void close() {
                release();
            }
        }

        /** The residence exists at another generation: the requester's evidence is stale. */
        record StaleGeneration(long currentSequence) implements PinResult {
            public StaleGeneration {
                if (currentSequence < 1) {
                    throw new IllegalArgumentException("currentSequence must be >= 1, got " + currentSequence);
                }
            }
        }

        /** No such residence. */
        record NotResident() implements PinResult {}

        /** The implementation's bounded pins are exhausted (by count or bytes); nothing was pinned. */
        record PinLimit(int pinsMax, long pinnedBytesMax) implements PinResult {
            public PinLimit {
                if (pinsMax < 0 || pinnedBytesMax < 0) {
                    throw new IllegalArgumentException("bounds must be >= 0, got " + pinsMax + ", " + pinnedBytesMax);
                }
            }
        }

        /** The owner of the bytes is closing or closed; nothing was pinned. */
        record Closed() implements PinResult {}
    }

    /** Where pinned bytes live. */
    sealed interface PayloadLocation {
        /**
         * In the source's DRAM arena: {@code bytes} is a read-only segment of exactly the payload; the arena
         * is the file {@code arenaFile} (a tmpfs file a same-host reader may map read-only), the payload at
         * {@code offset}.
         */
        record InArena(Path arenaFile, long offset, MemorySegment bytes) implements PayloadLocation {
            public InArena {
                Objects.requireNonNull(arenaFile, "arenaFile");
                Objects.requireNonNull(bytes, "bytes");
                if (offset < 0) {
                    throw new IllegalArgumentException("offset must be >= 0, got " + offset);
                }
                if (!bytes.isReadOnly()) {
                    throw new IllegalArgumentException("an arena location must expose a read-only segment");
                }
            }
        }

        /** In a file (the SSD tier): {@code length} bytes at {@code offset} of {@code file}. */
        record InFile(Path file, long offset, long length) implements PayloadLocation {
            public InFile {
                Objects.requireNonNull(file, "file");
                if (offset < 0 || length < 0) {
                    throw new IllegalArgumentException("offset and length must be >= 0, got " + offset + ", " + length);
                }
            }
        }
    }

    /** The outcome of {@link PinResult.Pinned#copyTo}. */
    sealed interface CopyOutcome {
        /** The destination holds exactly the saved bytes (checksum verified). */
        record Copied(long bytes) implements CopyOutcome {}

        /**
         * The stored bytes are missing, short or do not match their checksum; the residence was evicted.
         *
         * @param reason a short lowercase name: {@code checksum-mismatch}, {@code missing-file},
         *     {@code truncated-file}, {@code size-mismatch} (a file longer than the block) or {@code io-error}
         * @param detail what was found, for the log and the error message
         */
        record Corrupt(String reason, String detail) implements CopyOutcome {
            public Corrupt {
                Objects.requireNonNull(reason, "reason");
                Objects.requireNonNull(detail, "detail");
            }
        }
    }
}
