package orbitkv.conformance.kit;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import orbitkv.membership.Endpoint;

/**
 * One kit connection to a target's transfer data listener (docs/transfer.md, "Data channel"), spoken byte by
 * byte as the contract lays it out: 40-byte {@code BIND} and {@code READ} requests, 40-byte {@code AUTHORIZE} headers
 * followed by their AuthorizeRequest body, 32-byte response headers, big endian. Blocking socket I/O with a timeout on every read; a payload beyond {@link #PAYLOAD_BYTES_MAX} is refused
 * before it is buffered. Under peer mutual TLS the connection presents the kit member's certificate (the target
 * binds a grant only from a connection whose certificate names the grant's requester).
 */
final class DataWire implements AutoCloseable {
    static final int MAGIC = 0x4F4B5654;
    static final int REQUEST_BYTES = 40;
    static final int HEADER_BYTES = 32;
    /** The kit saves 64-byte blocks; nothing larger is ever granted to it. */
    static final int PAYLOAD_BYTES_MAX = 1 << 20;
    /** Status names by wire value (docs/transfer.md "Statuses"). */
    static final List<String> STATUSES = List.of("OK", "GRANT_UNKNOWN", "BLOCK_NOT_GRANTED", "ALREADY_READ", "EGRESS_LIMIT",
            "MALFORMED", "CLOSED", "SOURCE_READ_ERROR", "NOT_BOUND", "BAD_SECRET", "PEER_IDENTITY_MISMATCH");

    /** One response: status, echoed read id, payload (empty unless OK) and the informative CRC32C. */
    record Response(int status, long readId, byte[] payload, int crc32c) {
        String statusName() {
            return status >= 0 && status < STATUSES.size() ? STATUSES.get(status) : "status " + status;
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    private DataWire(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Connects to {@code data}; under TLS as kit node {@code node} of {@code tls}. */
    static DataWire connect(Endpoint data, Optional<KitPeerTls> tls, String node, Duration bound) throws IOException {
        int ms = (int) Math.max(1, Math.min(Integer.MAX_VALUE, bound.toMillis()));
        Socket s;
        if (tls.isPresent()) {
            Socket plain = new Socket();
            plain.connect(new InetSocketAddress(data.host(), data.port()), ms);
            SSLSocket ssl = (SSLSocket) context(tls.get(), node).getSocketFactory().createSocket(plain, data.host(), data.port(), true);
            ssl.setSoTimeout(ms);
            ssl.startHandshake();
            s = ssl;
        } else {
            s = new Socket();
            s.connect(new InetSocketAddress(data.host(), data.port()), ms);
        }
        s.setTcpNoDelay(true);
        return new DataWire(s);
    }

    private static SSLContext context(KitPeerTls tls, String node) throws SSLException {
        var f = tls.files(node);
        JdkSslContext ctx = (JdkSslContext) SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                .keyManager(f.certFile().toFile(), f.keyFile().toFile()).trustManager(f.caFile().toFile()).build();
        return ctx.context();
    }

    /** {@code BIND}: binds this connection to {@code grant} with {@code secret} (16 bytes). */
    void bind(UUID grant, byte[] secret) throws IOException {
        ByteBuffer b = header(2).putLong(grant.getMostSignificantBits()).putLong(grant.getLeastSignificantBits());
        b.put(secret, 0, Math.min(16, secret.length));
        send(b.array());
    }

    /** {@code READ} of block {@code index} of {@code grant}, echoing {@code readId}. */
    void read(UUID grant, int index, long readId) throws IOException {
        send(header(1).putLong(grant.getMostSignificantBits()).putLong(grant.getLeastSignificantBits()).putInt(index).putInt(0)
                .putLong(readId).array());
    }

    /**
     * {@code AUTHORIZE} (issue 37 item 5): a header announcing {@code announced} body bytes (unsigned 32-bit on the
     * wire), then {@code body} (which need not be as long as announced), in one write; echoing {@code requestId}.
     */
    void authorize(long announced, byte[] body, long requestId) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(REQUEST_BYTES + body.length).putInt(MAGIC).put((byte) 1).put((byte) 3).putShort((short) 0)
                .putLong(0).putLong(0).putInt((int) announced).putInt(0).putLong(requestId);
        send(b.put(body).array());
    }

    /** Any bytes, in one write (e.g. a malformed 40-byte frame). */
    void send(byte[] frame) throws IOException {
        out.write(frame);
        out.flush();
    }

    private static ByteBuffer header(int type) {
        return ByteBuffer.allocate(REQUEST_BYTES).putInt(MAGIC).put((byte) 1).put((byte) type).putShort((short) 0);
    }

    /** The next response within {@code bound}; an {@link AssertionError} names a broken header or a timeout. */
    Response response(Duration bound) throws IOException {
        socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, bound.toMillis())));
        byte[] h = new byte[HEADER_BYTES];
        try {
            in.readFully(h);
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no data-channel response within " + bound.toMillis() + " ms");
        } catch (EOFException e) {
            throw new AssertionError("the data connection closed before a response header arrived");
        }
        ByteBuffer b = ByteBuffer.wrap(h);
        Expect.equal(b.getInt(), MAGIC, "response magic");
        Expect.equal((int) b.get(), 1, "response version");
        int status = b.get() & 0xff;
        b.getShort();
        long readId = b.getLong();
        long length = b.getLong();
        int crc = b.getInt();
        Expect.that(length >= 0 && length <= PAYLOAD_BYTES_MAX, "response length " + length + " within 0.." + PAYLOAD_BYTES_MAX);
        Expect.that(status == 0 || length == 0, "a refusal (status " + status + ") carries length 0, got " + length);
        byte[] payload = new byte[(int) length];
        try {
            in.readFully(payload);
        } catch (SocketTimeoutException | EOFException e) {
            throw new AssertionError("the payload of " + length + " bytes did not arrive within " + bound.toMillis() + " ms");
        }
        return new Response(status, readId, payload, crc);
    }

    /** True iff the target closes the connection within {@code bound} (end of stream or reset; bytes before it are skipped). */
    boolean closesWithin(Duration bound) throws IOException {
        long end = System.nanoTime() + bound.toNanos();
        byte[] skip = new byte[4096];
        while (true) {
            long left = (end - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                return false;
            }
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
            try {
                if (in.read(skip) < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException reset) {
                return true;
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
