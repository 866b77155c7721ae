package orbitkv.conformance.mutant;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import orbitkv.membership.Endpoint;

/**
 * A loopback TCP proxy in front of one Manager's transfer data listener (issue 40 item 5): the Manager advertises it
 * in its grants ({@code --transfer-data-advertise}), so the kit's BIND and READ requests cross it. Requests (40-byte
 * frames) are relayed unchanged and shown to the connection's {@link TransferMutant.DataRewrite}; each response
 * (32-byte header and its payload, docs/transfer.md) is handed to the rewrite, which returns the bytes to forward. When
 * the source closes, the proxy closes the requester's side too, unless the rewrite asks to hold it open.
 *
 * <p>Bounds: at most {@value #CONNECTIONS_MAX} relayed connections (one more is closed at accept); a response payload
 * of at most {@value #PAYLOAD_BYTES_MAX} bytes (beyond: the connection is closed).
 */
final class DataRewriteProxy implements AutoCloseable {
    static final int CONNECTIONS_MAX = 64;
    static final int PAYLOAD_BYTES_MAX = 64 << 20;

    private final ServerSocket listener;
    private final Endpoint upstream;
    private final Semaphore connections = new Semaphore(CONNECTIONS_MAX);
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile TransferMutant mutant;

    private DataRewriteProxy(Endpoint upstream) throws IOException {
        this.upstream = upstream;
        listener = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("data-proxy-accept").start(this::accept);
    }

    /** A proxy on a free loopback port relaying to {@code upstream} (which need not listen yet). */
    static DataRewriteProxy start(Endpoint upstream) throws IOException {
        return new DataRewriteProxy(Objects.requireNonNull(upstream, "upstream"));
    }

    Endpoint endpoint() {
        return new Endpoint(WireRewriteProxy.LOOPBACK, listener.getLocalPort());
    }

    /** Connections accepted from now on are rewritten by {@code mutant} (null: the identity). */
    void rewriteWith(TransferMutant mutant) {
        this.mutant = mutant;
    }

    private void accept() {
        while (!listener.isClosed()) {
            Socket requester;
            try {
                requester = listener.accept();
            } catch (IOException closed) {
                return;
            }
            if (!connections.tryAcquire()) {
                closeQuietly(requester);
                continue;
            }
            TransferMutant m = mutant;
            TransferMutant.DataRewrite rewrite = m == null ? new TransferMutant.DataRewrite() : m.data();
            Thread.ofVirtual().name("data-proxy-conn").start(() -> relay(requester, rewrite));
        }
    }

    private void relay(Socket requester, TransferMutant.DataRewrite rewrite) {
        open.add(requester);
        try (Socket source = new Socket()) {
            open.add(source);
            source.connect(new InetSocketAddress(upstream.host(), upstream.port()), 5_000);
            source.setTcpNoDelay(true);
            requester.setTcpNoDelay(true);
            CountDownLatch requesterEnded = new CountDownLatch(1);
            Thread.ofVirtual().name("data-proxy-requests").start(() -> {
                requests(requester, source, rewrite);
                requesterEnded.countDown();
            });
            boolean hold = responses(source, requester, rewrite);
            if (hold) {
                requesterEnded.await(); // the mutant keeps the requester's side open until the requester closes it
            }
        } catch (IOException | InterruptedException e) {
            // the upstream is gone or the proxy is closing: both sides are closed below
        } finally {
            closeQuietly(requester);
            open.remove(requester);
            connections.release();
        }
    }

    /**
     * Requester → source: whole 40-byte frames shown to the rewrite, an AUTHORIZE's body (its unsigned length at offset
     * 24) relayed as it arrives; a partial frame at the end is relayed as is.
     */
    private static void requests(Socket requester, Socket source, TransferMutant.DataRewrite rewrite) {
        try {
            InputStream in = requester.getInputStream();
            OutputStream out = source.getOutputStream();
            byte[] frame = new byte[40];
            byte[] body = new byte[8192];
            while (true) {
                int n = in.readNBytes(frame, 0, frame.length);
                if (n < frame.length) {
                    out.write(frame, 0, n);
                    source.shutdownOutput();
                    return;
                }
                rewrite.request(frame.clone());
                out.write(frame);
                out.flush();
                for (long left = frame[5] == 3 ? Integer.toUnsignedLong(ByteBuffer.wrap(frame).getInt(24)) : 0; left > 0; ) {
                    int got = in.read(body, 0, (int) Math.min(body.length, left));
                    if (got < 0) {
                        source.shutdownOutput();
                        return;
                    }
                    out.write(body, 0, got);
                    out.flush();
                    left -= got;
                }
            }
        } catch (IOException e) {
            closeQuietly(source);
        }
    }

    /** Source → requester; returns true iff the rewrite holds the requester's side open after the source closed. */
    private static boolean responses(Socket source, Socket requester, TransferMutant.DataRewrite rewrite) throws IOException {
        DataInputStream in = new DataInputStream(source.getInputStream());
        OutputStream out = requester.getOutputStream();
        boolean hold = false;
        byte[] header = new byte[32];
        while (true) {
            try {
                in.readFully(header);
            } catch (EOFException | java.net.SocketException end) {
                return hold;
            }
            long length = ByteBuffer.wrap(header).getLong(16);
            if (length < 0 || length > PAYLOAD_BYTES_MAX) {
                throw new IOException("response length " + length + " beyond the proxy's bound");
            }
            byte[] payload = in.readNBytes((int) length);
            out.write(rewrite.response(header.clone(), payload));
            out.flush();
            hold |= rewrite.holdOpenAfter(header[5] & 0xff);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        open.forEach(DataRewriteProxy::closeQuietly);
    }
}
