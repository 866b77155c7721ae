package orbitkv.server.tier;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;

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

    static byte[] read(PinOutcome outcome) {
        if (!(outcome instanceof PinOutcome.Pinned(PinnedBlock block))) {
            throw new AssertionError("expected a pinned block, got " + outcome);
        }
        try (block) {
            ByteBuffer dst = ByteBuffer.allocate((int) block.sizeBytes());
            block.copyTo(dst);
            return dst.array();
        }
    }
}
