package orbitkv.conformance.perf;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The raw arms of {@link RestoreHarness}: a loopback HTTP/1.1 server that does the least a server can. {@code POST
 * /raw/<i>} reads and discards the request body and answers with prebuilt response {@code i} (head and body in one
 * direct buffer, written as is): the raw restore. {@code POST /sink} reads the body into a reused direct buffer and
 * answers {@code 200 {}}: the raw upload sink a save is compared with. One thread per connection (the harness opens
 * one); nothing is parsed beyond the request line and Content-Length.
 *
 * <p>With an origin (another {@code RawHttpServer}), {@code POST /relay/<i>} is the raw relay: this server fetches
 * {@code /raw/<i>} from the origin over its own keep-alive connection into one preallocated buffer, then answers
 * with those bytes. Store and forward, like a peer restore (every block READ into the response, then the response
 * written): the same two loopback crossings and no verification, no authorization, no framing work: the floor a
 * peer route is measured against.
 */
final class RawHttpServer implements AutoCloseable {
    private static final byte[] SINK_ANSWER = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
            .getBytes(StandardCharsets.US_ASCII);
    private final ServerSocketChannel listener;
    private final List<ByteBuffer> responses;
    private final List<SocketChannel> connections = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private final InetSocketAddress origin;
    private final List<ByteBuffer> relayHeads;
    private final List<ByteBuffer> originRequests;
    private final int responseBytesMax;

    /** @param bodies the raw restore bodies, answered by {@code /raw/<index>} */
    RawHttpServer(List<byte[]> bodies) throws IOException {
        this(bodies, null);
    }

    /** @param origin the server {@code /relay/<index>} fetches {@code /raw/<index>} from, or null (no relay) */
    RawHttpServer(List<byte[]> bodies, InetSocketAddress origin) throws IOException {
        this.origin = origin;
        relayHeads = bodies.stream().map(b -> ByteBuffer.wrap(head(b.length)).asReadOnlyBuffer()).toList();
        originRequests = java.util.stream.IntStream.range(0, bodies.size())
                .mapToObj(i -> KeepAliveClient.request("POST", "/raw/" + i, "application/json", new byte[0])).toList();
        responseBytesMax = bodies.stream().mapToInt(b -> b.length).max().orElse(0);
        responses = bodies.stream().map(RawHttpServer::response).toList();
        listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        acceptor = Thread.ofPlatform().name("raw-http-accept").daemon().start(this::accept);
    }

    private static byte[] head(int bodyLength) {
        return ("HTTP/1.1 200 OK\r\nContent-Type: application/x-orbitkv-blocks\r\nContent-Length: " + bodyLength
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    private static ByteBuffer response(byte[] body) {
        byte[] head = head(body.length);
        return ByteBuffer.allocateDirect(head.length + body.length).put(head).put(body).flip().asReadOnlyBuffer();
    }

    InetSocketAddress address() throws IOException {
        return (InetSocketAddress) listener.getLocalAddress();
    }

    private void accept() {
        while (listener.isOpen()) {
            try {
                SocketChannel c = listener.accept();
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                connections.add(c);
                Thread.ofPlatform().name("raw-http-conn").daemon().start(() -> serve(c));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(SocketChannel c) {
        ByteBuffer in = ByteBuffer.allocateDirect(1 << 20).limit(0); // nothing read yet (readHead compacts first)
        KeepAliveClient toOrigin = null;
        try (c) {
            while (true) {
                String head = readHead(c, in);
                if (head == null) {
                    return;
                }
                long length = contentLength(head);
                long left = length - in.remaining();
                in.clear();
                while (left > 0) { // discard the body
                    in.limit((int) Math.min(in.capacity(), left));
                    int n = c.read(in);
                    if (n < 0) {
                        return;
                    }
                    left -= n;
                    in.clear();
                }
                in.limit(0);
                String path = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
                if (path.startsWith("/relay/") && origin != null) {
                    if (toOrigin == null) {
                        toOrigin = new KeepAliveClient(origin, responseBytesMax);
                    }
                    relay(c, toOrigin, Integer.parseInt(path.substring("/relay/".length())));
                    continue;
                }
                ByteBuffer answer = path.equals("/sink") ? ByteBuffer.wrap(SINK_ANSWER)
                        : responses.get(Integer.parseInt(path.substring("/raw/".length()))).duplicate();
                while (answer.hasRemaining()) {
                    c.write(answer);
                }
            }
        } catch (IOException | RuntimeException e) {
            // the harness closed the connection, or sent something this server does not serve: the exchange fails there
        } finally {
            if (toOrigin != null) {
                try {
                    toOrigin.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }

    /** Fetches {@code /raw/<index>} whole from the origin, then writes it to {@code c} (store and forward). */
    private void relay(SocketChannel c, KeepAliveClient toOrigin, int index) throws IOException {
        KeepAliveClient.Response r = toOrigin.exchange(originRequests.get(index));
        if (r.status() != 200) {
            throw new IOException("origin answered " + r.status());
        }
        ByteBuffer[] answer = {relayHeads.get(index).duplicate(), toOrigin.buffer().slice(r.bodyOffset(), r.bodyLength())};
        while (answer[1].hasRemaining()) {
            c.write(answer);
        }
    }

    /** Reads up to the end of a request head; leaves the bytes after it readable in {@code in}; null at end of stream. */
    private static String readHead(SocketChannel c, ByteBuffer in) throws IOException {
        in.compact();
        while (true) {
            for (int i = 3; i < in.position(); i++) {
                if (in.get(i) == '\n' && in.get(i - 1) == '\r' && in.get(i - 2) == '\n' && in.get(i - 3) == '\r') {
                    byte[] head = new byte[i + 1];
                    in.flip();
                    in.get(head);
                    return new String(head, StandardCharsets.ISO_8859_1);
                }
            }
            if (c.read(in) < 0) {
                return null;
            }
        }
    }

    private static long contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                return Long.parseLong(line.substring("content-length:".length()).trim());
            }
        }
        return 0;
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (SocketChannel c : connections) {
            c.close();
        }
    }
}
