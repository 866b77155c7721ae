package orbitkv.conformance.perf;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The one HTTP/1.1 client of the restore/save harness ({@link RestoreHarness}), the same for every arm: one
 * keep-alive connection (TCP_NODELAY), a request written from a prebuilt direct buffer, the whole response read into
 * one preallocated direct buffer with no per-byte work (the head is parsed once it is complete; the body is only
 * counted). Every arm pays exactly this client's costs, so the ratios compare the servers.
 */
final class KeepAliveClient implements AutoCloseable {
    /** A response's status, its headers (lower-case names) and where its body lies in {@link #buffer()}. */
    record Response(int status, Map<String, String> headers, int bodyOffset, int bodyLength) {}

    private static final int HEAD_BYTES_MAX = 16 * 1024;
    private final SocketChannel channel;
    private final ByteBuffer in;

    /** @param responseBytesMax the largest response (head + body) this client will read */
    KeepAliveClient(InetSocketAddress server, int responseBytesMax) throws IOException {
        channel = SocketChannel.open(server);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        in = ByteBuffer.allocateDirect(responseBytesMax + HEAD_BYTES_MAX);
    }

    /** The buffer the last response was read into (valid until the next exchange). */
    ByteBuffer buffer() {
        return in;
    }

    /** A prebuilt request: head and body in one direct buffer, reusable (its position is never moved). */
    static ByteBuffer request(String method, String path, String contentType, byte[] body) {
        String head = method + " " + path + " HTTP/1.1\r\nHost: bench\r\nConnection: keep-alive\r\n"
                + (contentType == null ? "" : "Content-Type: " + contentType + "\r\n")
                + "Content-Length: " + body.length + "\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocateDirect(h.length + body.length).put(h).put(body).flip().asReadOnlyBuffer();
    }

    /** Writes {@code request} and reads the whole response; the caller times this call. */
    Response exchange(ByteBuffer request) throws IOException {
        ByteBuffer out = request.duplicate();
        while (out.hasRemaining()) {
            channel.write(out);
        }
        in.clear();
        int headEnd = -1;
        while (headEnd < 0) {
            if (channel.read(in) < 0) {
                throw new IOException("the server closed the connection before a response head");
            }
            headEnd = headEnd(in);
            if (headEnd < 0 && in.position() > HEAD_BYTES_MAX) {
                throw new IOException("response head above " + HEAD_BYTES_MAX + " bytes");
            }
        }
        byte[] head = new byte[headEnd];
        in.get(0, head);
        String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ", 3)[1]);
        Map<String, String> headers = new HashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
            }
        }
        String length = headers.get("content-length");
        if (length == null) {
            throw new IOException("response without Content-Length: " + lines[0]);
        }
        int bodyLength = Integer.parseInt(length);
        int bodyOffset = headEnd + 4;
        if (bodyOffset + (long) bodyLength > in.capacity()) {
            throw new IOException("response body of " + bodyLength + " bytes above this client's buffer");
        }
        in.limit(bodyOffset + bodyLength);
        while (in.hasRemaining()) {
            if (channel.read(in) < 0) {
                throw new IOException("the server closed the connection inside a body");
            }
        }
        return new Response(status, headers, bodyOffset, bodyLength);
    }

    /** The index of the CRLFCRLF ending the head within what was read so far, else -1. */
    private static int headEnd(ByteBuffer b) {
        for (int i = 3; i < b.position(); i++) {
            if (b.get(i) == '\n' && b.get(i - 1) == '\r' && b.get(i - 2) == '\n' && b.get(i - 3) == '\r') {
                return i - 3;
            }
        }
        return -1;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
