package orbitkv.conformance.peer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import orbitkv.membership.Endpoint;

/**
 * A loopback TCP proxy for fault schedules: {@link #cutAll()} severs every connection (a real disconnect
 * mid-snapshot or mid-delta), {@link #stall(boolean)} stops forwarding bytes in both directions on
 * established connections (a stalled subscriber: it neither receives frames nor returns ACKs, so the
 * source runs into its credit window). One virtual thread per direction per connection; at most {@value #CONNECTIONS_MAX} connections.
 */
public final class FaultProxy implements AutoCloseable {
    static final int CONNECTIONS_MAX = 256;

    private final ServerSocket listener;
    private final Endpoint upstream;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object stallLock = new Object();
    private volatile boolean stalled;
    private volatile boolean closed;

    public FaultProxy(Endpoint upstream) throws IOException {
        this.upstream = upstream;
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
                Thread.ofVirtual().start(() -> pump(down, up));
                Thread.ofVirtual().start(() -> pump(up, down));
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buf = new byte[16 << 10];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                awaitUnstalled();
                out.write(buf, 0, n);
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
