package orbitkv.conformance.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy between a membership client and one etcd member, for lease-loss and watch-gap
 * gates: {@link Mode#FORWARD} relays bytes; {@link Mode#BLACKHOLE} keeps every connection open but
 * silently drops bytes in both directions (a partition: requests hang until their deadlines);
 * {@link Mode#REFUSE} closes every connection and every new one at once (a reset: clients reconnect
 * later and, for a watch, resume from their last revision).
 */
public final class LoopbackProxy implements AutoCloseable {
    public enum Mode { FORWARD, BLACKHOLE, REFUSE }

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile Mode mode = Mode.FORWARD;
    private volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicLong bytesToEtcd = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong bytesFromEtcd = new java.util.concurrent.atomic.AtomicLong();

    /** TCP payload bytes forwarded client -> etcd (HTTP/2 framing and pings included). */
    public long bytesToEtcd() {
        return bytesToEtcd.get();
    }

    /** TCP payload bytes forwarded etcd -> client. */
    public long bytesFromEtcd() {
        return bytesFromEtcd.get();
    }

    public LoopbackProxy(URI etcdClientUrl) throws IOException {
        this.target = new InetSocketAddress(etcdClientUrl.getHost(), etcdClientUrl.getPort());
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("proxy-accept").start(this::acceptLoop);
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    public void mode(Mode next) {
        mode = next;
        if (next == Mode.REFUSE) {
            for (Socket s : open) {
                closeQuietly(s);
            }
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            if (mode == Mode.REFUSE) {
                closeQuietly(client);
                continue;
            }
            try {
                Socket upstream = new Socket(target.getAddress(), target.getPort());
                open.add(client);
                open.add(upstream);
                Thread.ofVirtual().start(() -> pump(client, upstream, bytesToEtcd));
                Thread.ofVirtual().start(() -> pump(upstream, client, bytesFromEtcd));
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    private void pump(Socket from, Socket to, java.util.concurrent.atomic.AtomicLong counter) {
        byte[] buf = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (mode == Mode.FORWARD) {
                    out.write(buf, 0, n);
                    out.flush();
                    counter.addAndGet(n);
                }
                // BLACKHOLE: read and drop, so the sender never sees back-pressure or a reset
            }
        } catch (IOException e) {
            // connection closed or reset
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void closeQuietly(Socket s) {
        open.remove(s);
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        for (Socket s : open) {
            closeQuietly(s);
        }
    }
}
