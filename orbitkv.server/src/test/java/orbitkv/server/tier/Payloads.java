package orbitkv.server.tier;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource.CopyOutcome;
import orbitkv.transfer.PayloadSource.PinResult;

/** Test payloads with the PERF-4 header: little-endian u64 generation, u64 block index, then a body. */
final class Payloads {
    private Payloads() {}

    static byte[] payload(long generation, long blockIndex, int sizeBytes) {
        if (sizeBytes < 16) {
            throw new IllegalArgumentException("a payload carries a 16-byte header, size " + sizeBytes);
        }
        ByteBuffer b = ByteBuffer.allocate(sizeBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(generation).putLong(blockIndex);
        for (int i = 16; i < sizeBytes; i++) {
            b.put((byte) (generation * 31 + blockIndex * 7 + i));
        }
        return b.array();
    }

    static StateKey key(int i) {
        return new StateKey(Namespace.utf8("model-a"), new byte[] {(byte) (i >>> 8), (byte) i});
    }

    /** Pins the current generation of {@code k} (the one pin contract: exact generation from the residence). */
    static PinResult pin(DramTier tier, StateKey k) {
        return tier.residence(k).map(r -> tier.pin(k, r.sequence())).orElseGet(PinResult.NotResident::new);
    }

    static PinResult pin(SsdTier tier, StateKey k) {
        return tier.residence(k).map(r -> tier.pin(k, r.sequence())).orElseGet(PinResult.NotResident::new);
    }

    /** Queues an SSD write of heap bytes with their CRC32C (nothing to release). */
    static SsdTier.Submitted submit(SsdTier tier, StateKey k, byte[] payload) {
        return tier.submit(k, java.lang.foreign.MemorySegment.ofArray(payload), crc32c(payload), () -> {});
    }

    static int crc32c(byte[] b) {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(b);
        return (int) c.getValue();
    }

    /** Copies a pinned block out (verified) and releases the pin. */
    static byte[] read(PinResult outcome) {
        if (!(outcome instanceof PinResult.Pinned block)) {
            throw new AssertionError("expected a pinned block, got " + outcome);
        }
        try (block) {
            ByteBuffer dst = ByteBuffer.allocate((int) block.sizeBytes());
            CopyOutcome copied = block.copyTo(dst);
            if (!(copied instanceof CopyOutcome.Copied)) {
                throw new AssertionError("expected a verified copy, got " + copied);
            }
            return dst.array();
        }
    }
}
