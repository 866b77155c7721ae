package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The {@code application/x-orbitkv-blocks} body (DESIGN §7): records
 * {@code u16 key_len (big-endian) | key | u32 payload_len (big-endian) | payload}. Used by save requests
 * and restore responses.
 *
 * <p>{@link Decoder} is incremental: it is fed body chunks as they arrive and checks every bound
 * <em>before</em> buffering (BND-1): the body total against {@code bodyBytesMax}, the record count against
 * {@link #RECORDS_MAX}, each key length against 1..{@link #KEY_BYTES_MAX} and each payload length against
 * {@code payloadBytesMax} as soon as the length field is complete, before allocating the payload.
 */
public final class BlockFraming {
    /** Records per request (DESIGN §7, §9 candidates bound). */
    public static final int RECORDS_MAX = 128;
    /** Key bytes per record (StateKey bound). */
    public static final int KEY_BYTES_MAX = 64;
    /** Framing overhead per record: u16 + u32. */
    public static final int RECORD_HEADER_BYTES = 6;
    public static final String CONTENT_TYPE = "application/x-orbitkv-blocks";

    private BlockFraming() {}

    /** One decoded record; arrays are owned by the record (not copied again). */
    public record Block(byte[] key, byte[] payload) {
        public Block {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(payload, "payload");
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Block b && Arrays.equals(key, b.key) && Arrays.equals(payload, b.payload);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(key) + Arrays.hashCode(payload);
        }
    }

    /** Writes one record header; the caller writes {@code payloadBytes} payload bytes right after it. */
    public static void writeHeader(ByteBuf out, byte[] key, long payloadBytes) {
        if (key.length < 1 || key.length > KEY_BYTES_MAX) {
            throw new IllegalArgumentException("key must be 1.." + KEY_BYTES_MAX + " bytes, got " + key.length);
        }
        if (payloadBytes < 0 || payloadBytes > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("payload must be 0..2^32-1 bytes, got " + payloadBytes);
        }
        out.writeShort(key.length);
        out.writeBytes(key);
        out.writeInt((int) payloadBytes);
    }

    /** Encodes whole records (tests and small bodies). */
    public static void encode(ByteBuf out, List<Block> blocks) {
        for (Block b : blocks) {
            writeHeader(out, b.key(), b.payload().length);
            out.writeBytes(b.payload());
        }
    }

    /** Incremental decoder of one body. Not thread-safe; one per request. */
    public static final class Decoder {
        private enum State { KEY_LENGTH, KEY, PAYLOAD_LENGTH, PAYLOAD }

        private final long bodyBytesMax;
        private final long payloadBytesMax;
        private final List<Block> blocks = new ArrayList<>();
        private final byte[] lengthField = new byte[4];
        private State state = State.KEY_LENGTH;
        private int lengthFilled;
        private byte[] key;
        private byte[] payload;
        private int filled;
        private long bodyBytes;

        /**
         * @param bodyBytesMax bound on the whole body
         * @param payloadBytesMax bound on one payload
         */
        public Decoder(long bodyBytesMax, long payloadBytesMax) {
            if (bodyBytesMax < 1 || payloadBytesMax < 0) {
                throw new IllegalArgumentException("bounds must be positive: body " + bodyBytesMax
                        + ", payload " + payloadBytesMax);
            }
            this.bodyBytesMax = bodyBytesMax;
            this.payloadBytesMax = payloadBytesMax;
        }

        /**
         * Consumes {@code chunk} entirely (its reader index advances).
         *
         * @throws ApiException BODY_TOO_LARGE, TOO_MANY_RECORDS, INVALID_KEY_LENGTH or PAYLOAD_TOO_LARGE
         */
        public void feed(ByteBuf chunk) {
            int readable = chunk.readableBytes();
            if (bodyBytes + readable > bodyBytesMax) {
                throw new ApiException(ApiError.BODY_TOO_LARGE,
                        "body exceeds " + bodyBytesMax + " bytes at byte " + (bodyBytes + readable));
            }
            while (chunk.isReadable()) {
                switch (state) {
                    case KEY_LENGTH -> {
                        if (fillLength(chunk, 2)) {
                            int keyLength = ((lengthField[0] & 0xFF) << 8) | (lengthField[1] & 0xFF);
                            if (keyLength < 1 || keyLength > KEY_BYTES_MAX) {
                                throw new ApiException(ApiError.INVALID_KEY_LENGTH, "record " + blocks.size()
                                        + ": key_len must be 1.." + KEY_BYTES_MAX + ", got " + keyLength);
                            }
                            if (blocks.size() >= RECORDS_MAX) {
                                throw new ApiException(ApiError.TOO_MANY_RECORDS,
                                        "a body holds at most " + RECORDS_MAX + " records");
                            }
                            key = new byte[keyLength];
                            filled = 0;
                            state = State.KEY;
                        }
                    }
                    case KEY -> {
                        if (fillArray(chunk, key)) {
                            state = State.PAYLOAD_LENGTH;
                        }
                    }
                    case PAYLOAD_LENGTH -> {
                        if (fillLength(chunk, 4)) {
                            long payloadLength = ((long) (lengthField[0] & 0xFF) << 24) | ((lengthField[1] & 0xFF) << 16)
                                    | ((lengthField[2] & 0xFF) << 8) | (lengthField[3] & 0xFF);
                            if (payloadLength > payloadBytesMax) {
                                throw new ApiException(ApiError.PAYLOAD_TOO_LARGE, "record " + blocks.size()
                                        + ": payload_len " + payloadLength + " exceeds " + payloadBytesMax + " bytes");
                            }
                            long position = bodyBytes + readable - chunk.readableBytes();
                            if (position + payloadLength > bodyBytesMax) {
                                throw new ApiException(ApiError.BODY_TOO_LARGE, "record " + blocks.size()
                                        + ": payload_len " + payloadLength + " would exceed the body bound of "
                                        + bodyBytesMax + " bytes");
                            }
                            payload = new byte[(int) payloadLength];
                            filled = 0;
                            state = State.PAYLOAD;
                            if (payloadLength == 0) {
                                completeRecord();
                            }
                        }
                    }
                    case PAYLOAD -> {
                        if (fillArray(chunk, payload)) {
                            completeRecord();
                        }
                    }
                }
            }
            bodyBytes += readable;
        }

        /**
         * The body ended: returns the records in body order.
         *
         * @throws ApiException NO_RECORDS for an empty body, TRUNCATED_RECORD if it ended inside a record
         */
        public List<Block> finish() {
            if (state != State.KEY_LENGTH || lengthFilled != 0) {
                throw new ApiException(ApiError.TRUNCATED_RECORD, "body ends inside record " + blocks.size()
                        + " (" + state.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + ") after "
                        + bodyBytes + " bytes");
            }
            if (blocks.isEmpty()) {
                throw new ApiException(ApiError.NO_RECORDS, "body holds no records");
            }
            return List.copyOf(blocks);
        }

        /** Body bytes consumed so far. */
        public long bodyBytes() {
            return bodyBytes;
        }

        private void completeRecord() {
            blocks.add(new Block(key, payload));
            key = null;
            payload = null;
            state = State.KEY_LENGTH;
        }

        private boolean fillLength(ByteBuf chunk, int width) {
            int n = Math.min(width - lengthFilled, chunk.readableBytes());
            chunk.readBytes(lengthField, lengthFilled, n);
            lengthFilled += n;
            if (lengthFilled == width) {
                lengthFilled = 0;
                return true;
            }
            return false;
        }

        private boolean fillArray(ByteBuf chunk, byte[] target) {
            int n = Math.min(target.length - filled, chunk.readableBytes());
            chunk.readBytes(target, filled, n);
            filled += n;
            return filled == target.length;
        }
    }
}
