package orbitkv.inventory;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * The 16-byte running digest over a snapshot transcript in canonical form (SNAP-7): MurmurHash3 x64 128 with seed 0
 * (Guava's {@code Hashing.murmur3_128()}), output bytes h1 then h2, each little-endian. It checks transmission only:
 * not semantic completeness, durability or authentication (SES-11), so a fast non-cryptographic 128-bit hash is
 * enough (issue 15: two SHA-256 walks cost about 125 of roughly 300 ms of core time per 1 M residences). Source and
 * receiver compute it independently with {@link Builder}; the byte-exact encoding is documented in
 * {@code docs/protocol.md} (transcript digest section), version 2 (version 1 was the same encoding under SHA-256):
 *
 * <pre>
 * "orbitkv.transcript-digest" 0x00 version(0x02)
 * per frame, in frame order:
 *   begin : 0x01 u64be frame  u64be view.msb u64be view.lsb  scope_digest[32]  u64be s0
 *   page  : 0x02 u64be frame  u64be page_ordinal  u32be count  record*
 *   replay: 0x03 u64be frame  u64be from  u64be to  u32be count  record*
 * record: u8 ns_len ns  u8 key_len key  u8 medium(1 DRAM, 2 SSD)  u8 op(1 PUT, 2 DELETE)  u64be sequence  u64be size
 * </pre>
 *
 * @param bytes exactly 32 bytes; copied in and out
 */
public record TranscriptDigest(byte[] bytes) {
    /** Width in bytes (128 bits). */
    public static final int BYTES = 16;
    /** Domain separation string, followed by 0x00. */
    public static final String DOMAIN = "orbitkv.transcript-digest";
    /** Encoding version byte: 2 = MurmurHash3 x64 128 over the version-1 canonical encoding. */
    public static final byte VERSION = 2;

    static final byte KIND_BEGIN = 1;
    static final byte KIND_PAGE = 2;
    static final byte KIND_REPLAY = 3;

    public TranscriptDigest {
        Objects.requireNonNull(bytes, "transcript digest must not be null");
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("transcript digest must be exactly " + BYTES + " bytes, got " + bytes.length);
        }
        bytes = bytes.clone();
    }

    /** Parses 32 hex characters. */
    public static TranscriptDigest ofHex(String hex) {
        Objects.requireNonNull(hex, "transcript digest hex must not be null");
        if (hex.length() != 2 * BYTES) {
            throw new IllegalArgumentException("transcript digest must be " + 2 * BYTES + " hex characters, got " + hex.length());
        }
        return new TranscriptDigest(HexFormat.of().parseHex(hex));
    }

    /** A fresh running digest with the domain and version already absorbed. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    public String hex() {
        return HexFormat.of().formatHex(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TranscriptDigest d && Arrays.equals(bytes, d.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return hex();
    }

    /**
     * The running digest; not thread-safe (one per staging attempt). Every field is written big-endian into
     * a small buffer that is handed to the hash in blocks (the encoding is unchanged; golden vectors pin it).
     */
    public static final class Builder {
        private static final int BUFFER_BYTES = 16 << 10;
        /** The largest record: length bytes, a 255-byte namespace, a 64-byte key, medium, op, two u64. */
        private static final int RECORD_BYTES_MAX = 1 + Namespace.MAX_BYTES + 1 + StateKey.MAX_KEY_BYTES + 2 + 16;
        private static final VarHandle U64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
        private static final VarHandle U32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

        private final Hasher hash = Hashing.murmur3_128().newHasher();
        private final byte[] buf = new byte[BUFFER_BYTES];
        private int fill;
        private boolean finished;

        private Builder() {
            byte[] domain = DOMAIN.getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(domain, 0, buf, 0, domain.length);
            fill = domain.length;
            buf[fill++] = 0;
            buf[fill++] = VERSION;
        }

        /** The snapshot begin frame. */
        public Builder begin(long frameNumber, UUID viewId, ScopeDigest scopeDigest, long s0) {
            open(KIND_BEGIN, frameNumber);
            u64(viewId.getMostSignificantBits());
            u64(viewId.getLeastSignificantBits());
            byte[] d = scopeDigest.bytes();
            room(d.length);
            System.arraycopy(d, 0, buf, fill, d.length);
            fill += d.length;
            u64(s0);
            return this;
        }

        /** One snapshot page. */
        public Builder page(long frameNumber, long pageOrdinal, List<ResidenceRecord> records) {
            open(KIND_PAGE, frameNumber);
            u64(pageOrdinal);
            records(records);
            return this;
        }

        /** One snapshot page (columnar form; the same bytes as the list form). */
        public Builder page(long frameNumber, long pageOrdinal, RecordBatch records) {
            open(KIND_PAGE, frameNumber);
            u64(pageOrdinal);
            records(records);
            return this;
        }

        /** One replay delta received while staging (columnar form; the same bytes as the list form). */
        public Builder replay(long frameNumber, Interval interval, RecordBatch records) {
            open(KIND_REPLAY, frameNumber);
            u64(interval.from());
            u64(interval.to());
            records(records);
            return this;
        }

        /** One replay delta received while staging. */
        public Builder replay(long frameNumber, Interval interval, List<ResidenceRecord> records) {
            open(KIND_REPLAY, frameNumber);
            u64(interval.from());
            u64(interval.to());
            records(records);
            return this;
        }

        /** The digest of everything absorbed; the builder cannot be used afterwards. */
        public TranscriptDigest finish() {
            requireOpen();
            finished = true;
            flush();
            return new TranscriptDigest(hash.hash().asBytes());
        }

        private void open(byte kind, long frameNumber) {
            requireOpen();
            room(1);
            buf[fill++] = kind;
            u64(frameNumber);
        }

        private void requireOpen() {
            if (finished) {
                throw new IllegalStateException("transcript digest builder already finished");
            }
        }

        private void records(List<ResidenceRecord> records) {
            u32(records.size());
            for (ResidenceRecord r : records) {
                room(RECORD_BYTES_MAX);
                StateKey k = r.key();
                Namespace ns = k.namespace();
                byte[] b = buf;
                int at = fill;
                b[at++] = (byte) ns.length();
                at = ns.copyInto(b, at);
                b[at++] = (byte) k.keyLength();
                at = k.copyKeyInto(b, at);
                b[at++] = (byte) (r.medium().ordinal() + 1);
                b[at++] = (byte) (r.op().ordinal() + 1);
                U64.set(b, at, r.sequence());
                U64.set(b, at + 8, r.sizeBytes());
                fill = at + 16;
            }
        }

        private void records(RecordBatch records) {
            u32(records.size());
            for (int i = 0; i < records.size(); i++) {
                room(RECORD_BYTES_MAX);
                Namespace ns = records.namespace(i);
                byte[] b = buf;
                int at = fill;
                b[at++] = (byte) ns.length();
                at = ns.copyInto(b, at);
                b[at++] = (byte) records.keyLength(i);
                at = records.copyKeyInto(i, b, at);
                b[at++] = (byte) (records.medium(i).ordinal() + 1);
                b[at++] = (byte) (records.op(i).ordinal() + 1);
                U64.set(b, at, records.sequence(i));
                U64.set(b, at + 8, records.sizeBytes(i));
                fill = at + 16;
            }
        }

        private void u64(long v) {
            room(8);
            U64.set(buf, fill, v);
            fill += 8;
        }

        private void u32(int v) {
            room(4);
            U32.set(buf, fill, v);
            fill += 4;
        }

        /** Makes room for {@code bytes} more, handing the buffered bytes to the hash if needed. */
        private void room(int bytes) {
            if (fill + bytes > buf.length) {
                flush();
            }
        }

        private void flush() {
            hash.putBytes(buf, 0, fill);
            fill = 0;
        }
    }
}
