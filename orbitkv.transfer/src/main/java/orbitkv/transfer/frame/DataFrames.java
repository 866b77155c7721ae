package orbitkv.transfer.frame;

import io.netty.buffer.ByteBuf;
import java.util.UUID;

/**
 * The TCP data channel's framing (docs/transfer.md "Data channel"). All integers are big-endian.
 *
 * <pre>
 * READ request, requester -> source, {@value #REQUEST_BYTES} bytes:
 *   u32 magic 'OKVT' | u8 version 1 | u8 type 1 (READ) | u16 0 | u64 grant id msb | u64 grant id lsb
 *   | u32 block index | u32 0 | u64 read id
 * BIND request, requester -> source, {@value #REQUEST_BYTES} bytes:
 *   u32 magic 'OKVT' | u8 version 1 | u8 type 2 (BIND) | u16 0 | u64 grant id msb | u64 grant id lsb
 *   | 16 bytes grant secret (Authorize's Authorized.grant_secret)
 * AUTHORIZE request, requester -> source, {@value #REQUEST_BYTES} bytes, then {@code length} bytes of an
 * AuthorizeRequest (the gRPC call's message, at most the source's authorizeRequestBytesMax):
 *   u32 magic 'OKVT' | u8 version 1 | u8 type 3 (AUTHORIZE) | u16 0 | u64 0 | u64 0 | u32 length | u32 0
 *   | u64 request id
 * response header, source -> requester, {@value #RESPONSE_HEADER_BYTES} bytes, then {@code length} payload bytes:
 *   u32 magic 'OKVT' | u8 version 1 | u8 status | u16 0 | u64 read id | u64 length | u32 crc32c | u32 0
 * </pre>
 *
 * A status other than {@link DataStatus#OK} carries length 0. A requester may send several requests on a
 * connection before reading their responses (pipelining); the source answers them strictly in request order, each
 * response complete before the next begins, so the requester matches them by order and checks each read id.
 *
 * <p>A connection READs only the grant it is bound to: the requester sends a BIND with the grant's secret before the
 * first READ of a grant on a connection (a later BIND rebinds it to another grant). A BIND that is accepted, or
 * that names a grant the source no longer has, gets no answer (a READ of an unknown grant is answered
 * {@link DataStatus#GRANT_UNKNOWN} as before); a wrong secret, or under TLS a peer certificate that names another
 * node than the grant's requester, is answered with a header of read id 0 and status {@link DataStatus#BAD_SECRET}
 * or {@link DataStatus#PEER_IDENTITY_MISMATCH}, and the connection closes. A READ of a grant the connection is not
 * bound to is answered {@link DataStatus#NOT_BOUND}: a sniffed grant id alone reads nothing.
 *
 * <p>An AUTHORIZE (issue 37 item 5) asks on the data channel what the gRPC Authorize call asks, and is answered
 * with status OK, its request id, the length and CRC32C of the AuthorizeResponse bytes that follow. An answer that
 * grants binds the connection to the new grant as a BIND with its secret would; one that grants nothing leaves the
 * connection unbound. Under TLS the connection's certificate is the caller's identity, as on the gRPC listener.
 */
public final class DataFrames {
    private DataFrames() {}

    public static final int MAGIC = 0x4F4B5654; // "OKVT"
    public static final byte VERSION = 1;
    public static final byte TYPE_READ = 1;
    public static final byte TYPE_BIND = 2;
    public static final byte TYPE_AUTHORIZE = 3;
    /** The offset of an AUTHORIZE's body length within its request header. */
    public static final int AUTHORIZE_LENGTH_OFFSET = 24;
    /** The offset of the request type within a request header. */
    public static final int TYPE_OFFSET = 5;
    /** Bytes of a grant secret. */
    public static final int SECRET_BYTES = 16;
    public static final int REQUEST_BYTES = 40;
    public static final int RESPONSE_HEADER_BYTES = 32;

    /** A decoded request frame. */
    public sealed interface Request permits ReadRequest, BindRequest, AuthorizeHeader {}

    /** A decoded READ request. */
    public record ReadRequest(UUID grantId, int blockIndex, long readId) implements Request {}

    /** A decoded BIND request; {@code secret} is {@link #SECRET_BYTES} long. */
    public record BindRequest(UUID grantId, byte[] secret) implements Request {}

    /**
     * A decoded AUTHORIZE request header; its {@code bodyBytes} of AuthorizeRequest follow it (unsigned 32-bit on the
     * wire, so a length of 2^31 or more reads negative: the caller refuses it as beyond any bound).
     */
    public record AuthorizeHeader(int bodyBytes, long requestId) implements Request {}

    /** A decoded response header. */
    public record ResponseHeader(DataStatus status, long readId, long length, int crc32c) {}

    /** A malformed frame, named. */
    public static final class MalformedFrame extends Exception {
        private static final long serialVersionUID = 1L;

        public MalformedFrame(String message) {
            super(message, null, false, false);
        }
    }

    public static void writeRequest(ByteBuf out, UUID grantId, int blockIndex, long readId) {
        out.writeInt(MAGIC).writeByte(VERSION).writeByte(TYPE_READ).writeShort(0)
                .writeLong(grantId.getMostSignificantBits()).writeLong(grantId.getLeastSignificantBits())
                .writeInt(blockIndex).writeInt(0).writeLong(readId);
    }

    public static void writeBind(ByteBuf out, UUID grantId, byte[] secret) {
        if (secret.length != SECRET_BYTES) {
            throw new IllegalArgumentException("a grant secret is " + SECRET_BYTES + " bytes, got " + secret.length);
        }
        out.writeInt(MAGIC).writeByte(VERSION).writeByte(TYPE_BIND).writeShort(0)
                .writeLong(grantId.getMostSignificantBits()).writeLong(grantId.getLeastSignificantBits())
                .writeBytes(secret);
    }

    /** Writes an AUTHORIZE header for {@code bodyBytes} bytes of AuthorizeRequest (the caller writes them next). */
    public static void writeAuthorize(ByteBuf out, int bodyBytes, long requestId) {
        if (bodyBytes < 0) {
            throw new IllegalArgumentException("an AUTHORIZE body has 0..2^31-1 bytes, got " + bodyBytes);
        }
        out.writeInt(MAGIC).writeByte(VERSION).writeByte(TYPE_AUTHORIZE).writeShort(0).writeLong(0).writeLong(0)
                .writeInt(bodyBytes).writeInt(0).writeLong(requestId);
    }

    /** The body length an AUTHORIZE header at {@code in}'s reader index announces, or -1 if it is not an AUTHORIZE. */
    public static long authorizeBodyBytes(ByteBuf in) {
        int at = in.readerIndex();
        if (in.getByte(at + TYPE_OFFSET) != TYPE_AUTHORIZE) {
            return -1;
        }
        return in.getUnsignedInt(at + AUTHORIZE_LENGTH_OFFSET);
    }

    /** Reads exactly {@link #REQUEST_BYTES} bytes: a READ, a BIND or an AUTHORIZE header. */
    public static Request readRequest(ByteBuf in) throws MalformedFrame {
        int magic = in.readInt();
        byte version = in.readByte();
        byte type = in.readByte();
        int reserved = in.readShort();
        long msb = in.readLong();
        long lsb = in.readLong();
        if (magic == MAGIC && version == VERSION && type == TYPE_BIND && reserved == 0) {
            byte[] secret = new byte[SECRET_BYTES];
            in.readBytes(secret);
            return new BindRequest(new UUID(msb, lsb), secret);
        }
        int index = in.readInt();
        int reserved2 = in.readInt();
        long readId = in.readLong();
        if (magic == MAGIC && version == VERSION && type == TYPE_AUTHORIZE && reserved == 0 && msb == 0 && lsb == 0
                && reserved2 == 0) {
            return new AuthorizeHeader(index, readId);
        }
        if (magic != MAGIC) {
            throw new MalformedFrame("bad magic 0x" + Integer.toHexString(magic));
        }
        if (version != VERSION) {
            throw new MalformedFrame("unsupported version " + version);
        }
        if (type != TYPE_READ && type != TYPE_BIND && type != TYPE_AUTHORIZE) {
            throw new MalformedFrame("unknown request type " + type);
        }
        if (reserved != 0 || reserved2 != 0 || type != TYPE_READ) {
            throw new MalformedFrame("reserved fields must be 0");
        }
        if (index < 0) {
            throw new MalformedFrame("block index " + Integer.toUnsignedString(index) + " exceeds 2^31-1");
        }
        return new ReadRequest(new UUID(msb, lsb), index, readId);
    }

    public static void writeResponseHeader(ByteBuf out, DataStatus status, long readId, long length, int crc32c) {
        out.writeInt(MAGIC).writeByte(VERSION).writeByte(status.code()).writeShort(0)
                .writeLong(readId).writeLong(length).writeInt(crc32c).writeInt(0);
    }

    /** Decodes a response header from exactly {@link #RESPONSE_HEADER_BYTES} bytes at {@code header[0..]}. */
    public static ResponseHeader readResponseHeader(byte[] header) throws MalformedFrame {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(header, 0, RESPONSE_HEADER_BYTES);
        int magic = b.getInt();
        byte version = b.get();
        byte status = b.get();
        int reserved = b.getShort();
        long readId = b.getLong();
        long length = b.getLong();
        int crc = b.getInt();
        int reserved2 = b.getInt();
        if (magic != MAGIC) {
            throw new MalformedFrame("bad magic 0x" + Integer.toHexString(magic));
        }
        if (version != VERSION) {
            throw new MalformedFrame("unsupported version " + version);
        }
        if (reserved != 0 || reserved2 != 0) {
            throw new MalformedFrame("reserved fields must be 0");
        }
        DataStatus s = DataStatus.of(status);
        if (s == null) {
            throw new MalformedFrame("unknown status " + status);
        }
        if (length < 0 || (s != DataStatus.OK && length != 0)) {
            throw new MalformedFrame("length " + Long.toUnsignedString(length) + " with status " + s);
        }
        return new ResponseHeader(s, readId, length, crc);
    }
}
