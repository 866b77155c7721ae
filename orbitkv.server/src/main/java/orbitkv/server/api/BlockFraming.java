package orbitkv.server.api;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The {@code application/x-orbitkv-blocks} body (DESIGN §7): records
 * {@code u16 key_len (big-endian) | key | u32 payload_len (big-endian) | payload}. Used by save requests
 * and restore responses.
 *
 * <p>{@link Decoder} is incremental: it is fed body chunks as they arrive and checks every bound
 * <em>before</em> a record reaches its {@link RecordSink} (BND-1): the body total against
 * {@code bodyBytesMax}, the record count against {@link #RECORDS_MAX}, each key length against
 * 1..{@link #KEY_BYTES_MAX}, duplicate keys, and each payload length against {@code payloadBytesMax} as soon
 * as the length field is complete, before anything is reserved for the payload.
 */
public final class BlockFraming {
    /** Records per request (DESIGN §7, §9 candidates bound). */
    public static final int RECORDS_MAX = 128;
    /** Key bytes per record (StateKey bound). */
    public static final int KEY_BYTES_MAX = 64;
    /** Framing overhead per record: u16 + u32. */
    public static final int RECORD_HEADER_BYTES = orbitkv.server.restore.RecordHeader.BYTES;
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
        orbitkv.server.restore.RecordHeader.write(out, key, payloadBytes);
    }

    /** Encodes whole records (tests and small bodies). */
    public static void encode(ByteBuf out, List<Block> blocks) {
        for (Block b : blocks) {
            writeHeader(out, b.key(), b.payload().length);
            out.writeBytes(b.payload());
        }
    }

    /**
     * Where decoded records go as they arrive (issue 20 item 4): a save streams them into DRAM reservations
     * ({@code CacheApi}), tests collect them on the heap. A method may refuse with {@link ApiException};
     * the decoder then stops, and the caller discards whatever the sink holds.
     */
    public interface RecordSink {
        /** Record {@code index}'s header is complete and valid: its key and payload length are known. */
        void begin(int index, byte[] key, long payloadBytes);

        /** The next payload bytes of the current record; {@code bytes} is consumed. */
        void payload(ByteBuffer bytes);

        /** The current record's payload is complete. */
        void end();
    }

    /** Collects records on the heap (tests and small tools). */
    static final class HeapSink implements RecordSink {
        private final List<Block> blocks = new ArrayList<>();
        private byte[] key;
        private byte[] payload;
        private int filled;

        @Override
        public void begin(int index, byte[] k, long payloadBytes) {
            key = k;
            payload = new byte[(int) payloadBytes];
            filled = 0;
        }

        @Override
        public void payload(ByteBuffer bytes) {
            int n = bytes.remaining();
            bytes.get(payload, filled, n);
            filled += n;
        }

        @Override
        public void end() {
            blocks.add(new Block(key, payload));
        }
    }

    /**
     * Incremental decoder of one body. Not thread-safe; one per request. Every bound is checked before the
     * sink sees a record (BND-1): body total, record count, key length, duplicate key, payload length. The
     * sink never sees a record whose header is malformed; {@link #finish()} refuses a body that ends inside
     * a record or holds none, so a save stores nothing of an incomplete or malformed body.
     */
    public static final class Decoder {
        private enum State { KEY_LENGTH, KEY, PAYLOAD_LENGTH, PAYLOAD }

        private final long bodyBytesMax;
        private final long payloadBytesMax;
        private final RecordSink sink;
        private final HeapSink heap;
        private final Set<String> keys = new HashSet<>();
        private final List<byte[]> keyOrder = new ArrayList<>();
        private final byte[] lengthField = new byte[4];
        private State state = State.KEY_LENGTH;
        private int lengthFilled;
        private byte[] key;
        private int keyFilled;
        private long payloadLeft;
        private long bodyBytes;

        /** A decoder that collects records on the heap ({@link #finishBlocks()}). */
        public Decoder(long bodyBytesMax, long payloadBytesMax) {
            this(bodyBytesMax, payloadBytesMax, new HeapSink());
        }

        /**
         * @param bodyBytesMax bound on the whole body
         * @param payloadBytesMax bound on one payload
         * @param sink receives each record as it arrives
         */
        public Decoder(long bodyBytesMax, long payloadBytesMax, RecordSink sink) {
            if (bodyBytesMax < 1 || payloadBytesMax < 0) {
                throw new IllegalArgumentException("bounds must be positive: body " + bodyBytesMax
                        + ", payload " + payloadBytesMax);
            }
            this.bodyBytesMax = bodyBytesMax;
            this.payloadBytesMax = payloadBytesMax;
            this.sink = Objects.requireNonNull(sink, "sink");
            this.heap = sink instanceof HeapSink h ? h : null;
        }

        /**
         * Consumes {@code chunk} entirely (its reader index advances).
         *
         * @throws ApiException BODY_TOO_LARGE, TOO_MANY_RECORDS, INVALID_KEY_LENGTH, DUPLICATE_KEY,
         *     PAYLOAD_TOO_LARGE, or the sink's refusal
         */
        public void feed(ByteBuf chunk) {
            int readable = chunk.readableBytes();
            if (bodyBytes + readable > bodyBytesMax) {
                throw new ApiException(ApiError.BODY_TOO_LARGE,
                        "body exceeds " + bodyBytesMax + " bytes at byte " + (bodyBytes + readable));
            }
            while (chunk.isReadable()) {
                switch (state) {
                    case KEY_LENGTH -> keyLength(chunk);
                    case KEY -> key(chunk);
                    case PAYLOAD_LENGTH -> payloadLength(chunk, bodyBytes + readable);
                    case PAYLOAD -> payload(chunk);
                }
            }
            bodyBytes += readable;
        }

        /** KEY_LENGTH: two bytes, 1..{@link #KEY_BYTES_MAX}; the record count bound is checked here. */
        private void keyLength(ByteBuf chunk) {
            if (!fillLength(chunk, 2)) {
                return;
            }
            int keyLength = ((lengthField[0] & 0xFF) << 8) | (lengthField[1] & 0xFF);
            if (keyLength < 1 || keyLength > KEY_BYTES_MAX) {
                throw new ApiException(ApiError.INVALID_KEY_LENGTH, "record " + keyOrder.size()
                        + ": key_len must be 1.." + KEY_BYTES_MAX + ", got " + keyLength);
            }
            if (keyOrder.size() >= RECORDS_MAX) {
                throw new ApiException(ApiError.TOO_MANY_RECORDS, "a body holds at most " + RECORDS_MAX + " records");
            }
            key = new byte[keyLength];
            keyFilled = 0;
            state = State.KEY;
        }

        /** KEY: the key bytes; a key repeated within the body is refused. */
        private void key(ByteBuf chunk) {
            int n = Math.min(key.length - keyFilled, chunk.readableBytes());
            chunk.readBytes(key, keyFilled, n);
            keyFilled += n;
            if (keyFilled == key.length) {
                String hex = HexFormat.of().formatHex(key);
                if (!keys.add(hex)) {
                    throw new ApiException(ApiError.DUPLICATE_KEY, "record " + keyOrder.size() + " repeats key " + hex);
                }
                state = State.PAYLOAD_LENGTH;
            }
        }

        /**
         * PAYLOAD_LENGTH: four bytes, checked against the payload and body bounds before the sink sees the record.
         * {@code chunkEnd} is the body offset just past this chunk.
         */
        private void payloadLength(ByteBuf chunk, long chunkEnd) {
            if (!fillLength(chunk, 4)) {
                return;
            }
            long position = chunkEnd - chunk.readableBytes(); // the body offset of the payload's first byte
            long payloadLength = ((long) (lengthField[0] & 0xFF) << 24) | ((lengthField[1] & 0xFF) << 16)
                    | ((lengthField[2] & 0xFF) << 8) | (lengthField[3] & 0xFF);
            int index = keyOrder.size();
            if (payloadLength > payloadBytesMax) {
                throw new ApiException(ApiError.PAYLOAD_TOO_LARGE, "record " + index
                        + ": payload_len " + payloadLength + " exceeds " + payloadBytesMax + " bytes");
            }
            if (position + payloadLength > bodyBytesMax) {
                throw new ApiException(ApiError.BODY_TOO_LARGE, "record " + index + ": payload_len " + payloadLength
                        + " would exceed the body bound of " + bodyBytesMax + " bytes");
            }
            sink.begin(index, key, payloadLength);
            keyOrder.add(key);
            payloadLeft = payloadLength;
            state = State.PAYLOAD;
            if (payloadLength == 0) {
                completeRecord();
            }
        }

        /** PAYLOAD: hands the payload bytes to the sink without copying them. */
        private void payload(ByteBuf chunk) {
            int n = (int) Math.min(payloadLeft, chunk.readableBytes());
            for (ByteBuffer b : chunk.nioBuffers(chunk.readerIndex(), n)) {
                sink.payload(b);
            }
            chunk.skipBytes(n);
            payloadLeft -= n;
            if (payloadLeft == 0) {
                completeRecord();
            }
        }

        /**
         * The body ended: returns the number of records.
         *
         * @throws ApiException NO_RECORDS for an empty body, TRUNCATED_RECORD if it ended inside a record
         */
        public int finish() {
            if (state != State.KEY_LENGTH || lengthFilled != 0) {
                int index = state == State.PAYLOAD ? keyOrder.size() - 1 : keyOrder.size();
                throw new ApiException(ApiError.TRUNCATED_RECORD, "body ends inside record " + index
                        + " (" + state.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + ") after "
                        + bodyBytes + " bytes");
            }
            if (keyOrder.isEmpty()) {
                throw new ApiException(ApiError.NO_RECORDS, "body holds no records");
            }
            return keyOrder.size();
        }

        /** {@link #finish()}, then the records collected on the heap, in body order. */
        public List<Block> finishBlocks() {
            if (heap == null) {
                throw new IllegalStateException("this decoder streams into a sink; it holds no blocks");
            }
            finish();
            return List.copyOf(heap.blocks);
        }

        /** The keys of the records begun so far, in body order. */
        public List<byte[]> keys() {
            return List.copyOf(keyOrder);
        }

        /** Body bytes consumed so far. */
        public long bodyBytes() {
            return bodyBytes;
        }

        private void completeRecord() {
            sink.end();
            key = null;
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
    }
}
