package orbitkv.server.restore;

import io.netty.buffer.ByteBuf;

/**
 * The header of one record of the {@code application/x-orbitkv-blocks} body (docs/api.md "Block framing"):
 * {@code u16 key_len | key | u32 payload_len}, big-endian. A block key is 1..64 bytes; a zero-length key never names a
 * block, which is how a streamed restore marks its end record.
 */
public final class RecordHeader {
    /** Framing overhead per record: u16 + u32. */
    public static final int BYTES = 6;
    /** Key bytes per record (StateKey bound). */
    public static final int KEY_BYTES_MAX = 64;

    private RecordHeader() {}

    /** The record bytes of a block with {@code keyBytes} key bytes and {@code payloadBytes} payload bytes. */
    public static long recordBytes(int keyBytes, long payloadBytes) {
        return BYTES + keyBytes + payloadBytes;
    }

    /** Writes the header of a block record; the key is 1..64 bytes, the payload 0..2^32-1 bytes. */
    public static void write(ByteBuf out, byte[] key, long payloadBytes) {
        if (key.length < 1 || key.length > KEY_BYTES_MAX) {
            throw new IllegalArgumentException("key must be 1.." + KEY_BYTES_MAX + " bytes, got " + key.length);
        }
        writeUnchecked(out, key, payloadBytes);
    }

    static void writeUnchecked(ByteBuf out, byte[] key, long payloadBytes) {
        if (payloadBytes < 0 || payloadBytes > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("payload must be 0..2^32-1 bytes, got " + payloadBytes);
        }
        out.writeShort(key.length);
        out.writeBytes(key);
        out.writeInt((int) payloadBytes);
    }
}
