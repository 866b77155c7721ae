package orbitkv.server.tier;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource.CopyOutcome;
import orbitkv.transfer.PayloadSource.PinResult;

/**
 * The pin lifecycle both tiers share ({@link PinResult.Pinned}): bytes are copied only while the pin is
 * held, into a destination with room for the whole block, verified against the CRC32C computed at save
 * time; a broken block is evicted through the table's normal delete path and counted; the pin is released
 * exactly once however often {@link #release()} is called (INV-9). Subclasses say only where the bytes live.
 */
abstract class TierPin<S> implements PinResult.Pinned {
    private final AtomicBoolean held = new AtomicBoolean(true);
    final ResidenceTable<S> table;
    final ResidenceTable.Entry<S> entry;
    private final boolean charged;

    TierPin(ResidenceTable<S> table, ResidenceTable.Entry<S> entry, boolean charged) {
        this.table = table;
        this.entry = entry;
        this.charged = charged;
    }

    @Override
    public final StateKey key() {
        return entry.key;
    }

    @Override
    public final Medium medium() {
        return table.medium();
    }

    @Override
    public final long residencySequence() {
        return entry.sequence;
    }

    @Override
    public final long sizeBytes() {
        return entry.sizeBytes;
    }

    @Override
    public final int crc32c() {
        return entry.crc32c;
    }

    @Override
    public final CopyOutcome copyTo(ByteBuffer dst) {
        if (!held.get()) {
            throw new IllegalStateException("pin of " + entry.key + " in " + medium() + " was released");
        }
        if (dst.remaining() < entry.sizeBytes) {
            throw new BufferOverflowException();
        }
        ByteBuffer view = dst.slice(dst.position(), (int) entry.sizeBytes);
        Broken broken = copyBytes(view.duplicate());
        if (broken == null) {
            int crc = crc32c(view);
            if (crc == entry.crc32c) {
                dst.position(dst.position() + (int) entry.sizeBytes);
                table.counters().payloadCopied(entry.sizeBytes);
                return new CopyOutcome.Copied(entry.sizeBytes);
            }
            broken = new Broken(CorruptionReason.CHECKSUM_MISMATCH,
                    "CRC32C " + Integer.toHexString(crc) + " != saved " + Integer.toHexString(entry.crc32c));
        }
        table.evictBroken(entry, broken.reason());
        return new CopyOutcome.Corrupt(broken.reason().wireName(), medium() + " block " + entry.key.keyHex()
                + " at sequence " + entry.sequence + ": " + broken.detail());
    }

    /**
     * Verifies the stored bytes where they live (CRC32C over the arena slice, no copy): on success the returned
     * read-only buffer may be sent while this pin is held, which keeps those bytes unmodified (INV-9). A mismatch
     * evicts and counts the residence exactly as {@link #copyTo} does. A pin whose bytes are not in an arena (SSD)
     * answers {@link InPlace.NotInArena}.
     */
    final InPlace verifyInPlace() {
        if (!held.get()) {
            throw new IllegalStateException("pin of " + entry.key + " in " + medium() + " was released");
        }
        if (!(location() instanceof orbitkv.transfer.PayloadSource.PayloadLocation.InArena arena)) {
            return new InPlace.NotInArena();
        }
        ByteBuffer bytes = arena.bytes().asByteBuffer();
        int crc = crc32c(bytes);
        if (crc == entry.crc32c) {
            table.counters().payloadVerifiedInPlace(entry.sizeBytes);
            return new InPlace.Verified(bytes);
        }
        table.evictBroken(entry, CorruptionReason.CHECKSUM_MISMATCH);
        return new InPlace.Corrupt(CorruptionReason.CHECKSUM_MISMATCH.wireName(), medium() + " block "
                + entry.key.keyHex() + " at sequence " + entry.sequence + ": CRC32C " + Integer.toHexString(crc)
                + " != saved " + Integer.toHexString(entry.crc32c));
    }

    @Override
    public final void release() {
        if (held.compareAndSet(true, false)) {
            table.unpin(entry, charged);
        }
    }

    /** Why stored bytes could not be read whole, and what was found. */
    record Broken(CorruptionReason reason, String detail) {}

    /**
     * Fills {@code view} (exactly {@link #sizeBytes()} remaining) with the stored bytes; null on success,
     * else why the stored bytes could not be read whole (the checksum is verified by the caller).
     */
    abstract Broken copyBytes(ByteBuffer view);

    /** CRC32C of the remaining bytes of {@code b} (its position is not moved). */
    static int crc32c(ByteBuffer b) {
        CRC32C c = new CRC32C();
        c.update(b.duplicate());
        return (int) c.getValue();
    }
}
