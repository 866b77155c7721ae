package orbitkv.conformance.peer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.membership.Endpoint;

/**
 * A loopback TCP proxy for fault schedules: {@link #cutAll()} severs every connection (a real disconnect
 * mid-snapshot or mid-delta), {@link #stall(boolean)} stops forwarding bytes in both directions on
 * established connections (a stalled subscriber: it neither receives frames nor returns ACKs, so the
 * source runs into its credit window), {@link #latency(Duration)} delays every forwarded chunk, and an
 * {@link Interceptor} sees (and may rewrite: corrupt, reorder) the bytes of each direction before they are
 * forwarded. One virtual thread per direction per connection; at most {@value #CONNECTIONS_MAX} connections.
 */
public final class FaultProxy implements AutoCloseable {
    static final int CONNECTIONS_MAX = 256;

    /**
     * Sees the bytes of one direction of one connection, in order, before they are forwarded, and returns
     * the bytes to forward instead (possibly fewer, held back until a later call, or rewritten). Called by
     * one thread per direction; the two directions of a connection may call concurrently.
     */
    @FunctionalInterface
    public interface Interceptor {
        /** Forwards everything unchanged. */
        Interceptor NONE = (connection, towardUpstream, bytes) -> bytes;

        /**
         * @param connection a number unique to the connection within this proxy
         * @param towardUpstream true for bytes from the downstream client toward the upstream server
         * @param bytes the bytes just read (owned by the callee)
         * @return the bytes to forward now
         */
        byte[] intercept(long connection, boolean towardUpstream, byte[] bytes);
    }

    private final ServerSocket listener;
    private final Endpoint upstream;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object stallLock = new Object();
    private volatile boolean stalled;
    private volatile boolean closed;
    private volatile long latencyNanos;
    private final Interceptor interceptor;
    private final AtomicLong connections = new AtomicLong();

    public FaultProxy(Endpoint upstream) throws IOException {
        this(upstream, Interceptor.NONE);
    }

    /** A proxy whose forwarded bytes pass through {@code interceptor}. */
    public FaultProxy(Endpoint upstream, Interceptor interceptor) throws IOException {
        this.upstream = upstream;
        this.interceptor = interceptor;
        this.listener = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("fault-proxy-accept").start(this::acceptLoop);
    }

    public Endpoint endpoint() {
        return new Endpoint("127.0.0.1", listener.getLocalPort());
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket down = listener.accept();
                if (sockets.size() >= 2 * CONNECTIONS_MAX) {
                    down.close();
                    continue;
                }
                Socket up = new Socket();
                up.connect(new InetSocketAddress(upstream.host(), upstream.port()));
                down.setTcpNoDelay(true);
                up.setTcpNoDelay(true);
                sockets.add(down);
                sockets.add(up);
                long id = connections.incrementAndGet();
                Thread.ofVirtual().start(() -> pump(down, up, id, true));
                Thread.ofVirtual().start(() -> pump(up, down, id, false));
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, long connection, boolean towardUpstream) {
        byte[] buf = new byte[16 << 10];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                awaitUnstalled();
                byte[] forward = interceptor.intercept(connection, towardUpstream, java.util.Arrays.copyOf(buf, n));
                long delay = latencyNanos;
                if (delay > 0) {
                    Thread.sleep(delay / 1_000_000, (int) (delay % 1_000_000)); // the injected latency itself
                }
                out.write(forward);
            }
        } catch (IOException | InterruptedException e) {
            // cut or closed
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void awaitUnstalled() throws InterruptedException {
        synchronized (stallLock) {
            while (stalled && !closed) {
                stallLock.wait();
            }
        }
    }

    /** Stops (true) or resumes (false) forwarding on every connection. */
    public void stall(boolean on) {
        synchronized (stallLock) {
            stalled = on;
            stallLock.notifyAll();
        }
    }

    /** Delays every forwarded chunk by {@code perChunk} (zero: no added latency). */
    public void latency(Duration perChunk) {
        latencyNanos = perChunk.toNanos();
    }

    /** Severs every open connection; new connections are accepted. */
    public void cutAll() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }

    private void closeQuietly(Socket s) {
        sockets.remove(s);
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        stall(false);
        listener.close();
        cutAll();
    }
}
