package orbitkv.conformance.peer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.membership.Endpoint;

/**
 * The one TCP fault proxy of the conformance suite (issue 17): tests, the fault campaign and the multi-host
 * gate put it between two processes, or in front of every outbound connection of one process, and inject
 * per-link faults ({@link LinkFaults}): lossless partition, lossy blackhole, reset/refuse, delay with jitter,
 * segment loss (as retransmission delay), connection resets, bit corruption, a bandwidth cap, and, on
 * plaintext HTTP/2, duplicated, reordered, detectably corrupted and oversized gRPC messages
 * ({@link LinkFaults.FrameFaults}).
 *
 * <p>Two ways to stand in a link:
 * <ul>
 *   <li><b>fixed upstream</b> ({@link #FaultProxy(Endpoint)}, {@link Builder#upstream}): every connection goes to one
 *       endpoint (an etcd member, a peer listener); the link is named by that endpoint.</li>
 *   <li><b>HTTP CONNECT</b> ({@link Builder#connectProxy()}): a forward proxy; the client names the target in a
 *       {@code CONNECT host:port} request, and the link is named {@code host:port}. A Manager started with
 *       {@code -Dhttps.proxyHost=<proxy host> -Dhttps.proxyPort=<proxy port> -Dhttp.nonProxyHosts=} sends
 *       every peer channel through it (grpc-java's default proxy detector), so one proxy per Manager gives
 *       one faultable link per (Manager, peer) pair: a pairwise partition.</li>
 * </ul>
 *
 * <p>Randomized faults draw from a {@link SplittableRandom} seeded from {@link Builder#seed}, the link and
 * the connection's ordinal: the decisions replay with the seed, the TCP chunk boundaries they apply to do
 * not (the kernel chooses them).
 *
 * <p>Bounds: at most {@value #CONNECTIONS_MAX} connections (beyond: closed at once, counted as refused);
 * per direction at most {@value #QUEUED_CHUNKS_MAX} chunks of at most {@value #CHUNK_BYTES} bytes wait for
 * their delivery time (beyond: the reader stops reading, the sender sees TCP back-pressure); a CONNECT
 * request head is at most {@value #CONNECT_HEAD_BYTES_MAX} bytes. Two virtual threads per direction per
 * connection. The older API ({@link #stall}, {@link #cutAll}, {@link #latency}, {@link Interceptor}) is kept.
 */
public final class FaultProxy implements AutoCloseable {
    static final int CONNECTIONS_MAX = 256;
    static final int QUEUED_CHUNKS_MAX = 64;
    static final int CHUNK_BYTES = 16 << 10;
    static final int CONNECT_HEAD_BYTES_MAX = 8 << 10;
    /** Read timeout used to release reordered frames of an idle direction. */
    private static final int IDLE_POLL_MS = 20;

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

    /**
     * What one link saw (monotonic counters).
     *
     * @param connections connections accepted for the link
     * @param refused connections closed at once (refuse fault, connection bound, CONNECT refused)
     * @param bytesTowardUpstream bytes forwarded client → upstream
     * @param bytesTowardDownstream bytes forwarded upstream → client
     * @param chunksDropped chunks read and discarded by a blackhole
     * @param chunksLost chunks delayed by a simulated segment loss
     * @param resets connections reset by the reset fault
     * @param bitsFlipped chunks with one flipped bit
     * @param framesDuplicated gRPC messages sent twice
     * @param framesReordered gRPC messages sent after their successor
     * @param framesCorrupted gRPC messages made malformed
     * @param framesOversized gRPC messages whose length prefix was enlarged
     */
    public record LinkStats(long connections, long refused, long bytesTowardUpstream, long bytesTowardDownstream,
                            long chunksDropped, long chunksLost, long resets, long bitsFlipped, long framesDuplicated,
                            long framesReordered, long framesCorrupted, long framesOversized) {}

    /** Builds a proxy. */
    public static final class Builder {
        private InetAddress listenHost = InetAddress.getLoopbackAddress();
        private int listenPort;
        private Endpoint upstream;
        private boolean connect;
        private long seed = 1;
        private Interceptor interceptor = Interceptor.NONE;
        private String name = "fault-proxy";
        private boolean http2;

        private Builder() {}

        /**
         * The link carries plaintext HTTP/2 (gRPC without TLS): every connection is parsed from its first byte,
         * so {@link LinkFaults.FrameFaults} can be switched on at any time. Without it frame faults are ignored
         * and bytes pass unparsed.
         */
        public Builder http2() {
            this.http2 = true;
            return this;
        }

        /** Listens on {@code host:port} (default: loopback, a free port). */
        public Builder listen(InetAddress host, int port) {
            this.listenHost = Objects.requireNonNull(host, "host");
            this.listenPort = port;
            return this;
        }

        /** Every connection goes to {@code target}. */
        public Builder upstream(Endpoint target) {
            this.upstream = Objects.requireNonNull(target, "target");
            this.connect = false;
            return this;
        }

        /** An HTTP CONNECT forward proxy: each connection names its target. */
        public Builder connectProxy() {
            this.connect = true;
            this.upstream = null;
            return this;
        }

        /** The seed of every randomized fault decision. */
        public Builder seed(long s) {
            this.seed = s;
            return this;
        }

        /** Bytes of fixed-upstream connections pass through {@code i} first. */
        public Builder interceptor(Interceptor i) {
            this.interceptor = Objects.requireNonNull(i, "interceptor");
            return this;
        }

        /** A name for its threads and messages. */
        public Builder name(String n) {
            this.name = Objects.requireNonNull(n, "name");
            return this;
        }

        public FaultProxy build() throws IOException {
            if (!connect && upstream == null) {
                throw new IllegalStateException("a fault proxy needs an upstream or connectProxy()");
            }
            return new FaultProxy(this);
        }
    }

    private final String name;
    private final ServerSocket listener;
    private final Endpoint upstream;
    private final Interceptor interceptor;
    private final long seed;
    private final boolean http2;
    private final Set<Connection> open = ConcurrentHashMap.newKeySet();
    private final Map<String, LinkFaults> linkFaults = new ConcurrentHashMap<>();
    private final Map<String, Counters> counters = new ConcurrentHashMap<>();
    /**
     * The bandwidth cap's timeline per link and direction, shared by every connection of the link: the cap bounds
     * the link as a whole, as a slow NIC or path would, not each connection (a READ spread over pooled data
     * connections sees the cap once).
     */
    private final Map<String, AtomicLong> paceUntilNanos = new ConcurrentHashMap<>();
    private final AtomicLong connectionNumbers = new AtomicLong();
    /** Notified whenever faults change, so held bytes and held connects move on. */
    private final Object faultsChanged = new Object();
    private volatile LinkFaults defaults = LinkFaults.NONE;
    private volatile boolean stalled;
    private volatile long latencyNanos;
    private volatile boolean closed;

    /** A loopback proxy in front of {@code upstream}. */
    public FaultProxy(Endpoint upstream) throws IOException {
        this(upstream, Interceptor.NONE);
    }

    /** A loopback proxy whose forwarded bytes pass through {@code interceptor}. */
    public FaultProxy(Endpoint upstream, Interceptor interceptor) throws IOException {
        this(builder().upstream(upstream).interceptor(interceptor));
    }

    private FaultProxy(Builder b) throws IOException {
        this.name = b.name;
        this.upstream = b.upstream;
        this.interceptor = b.interceptor;
        this.seed = b.seed;
        this.http2 = b.http2;
        this.listener = new ServerSocket();
        listener.setReuseAddress(true);
        listener.bind(new InetSocketAddress(b.listenHost, b.listenPort), 64);
        Thread.ofVirtual().name(name + "-accept").start(this::acceptLoop);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A loopback proxy in front of the server at {@code url} ({@code http://host:port}, e.g. an etcd member). */
    public static FaultProxy inFrontOf(URI url) throws IOException {
        return new FaultProxy(new Endpoint(url.getHost(), url.getPort()));
    }

    // ------------------------------------------------------------------ addresses

    /** The listening endpoint. */
    public Endpoint endpoint() {
        return new Endpoint(listener.getInetAddress().getHostAddress(), listener.getLocalPort());
    }

    /** {@code http://host:port} of the listener (an etcd client URL through this proxy). */
    public URI url() {
        return URI.create("http://" + endpoint().host() + ":" + endpoint().port());
    }

    /** The link name of a fixed-upstream proxy (its upstream), or null for a CONNECT proxy. */
    public String link() {
        return upstream == null ? null : linkOf(upstream);
    }

    static String linkOf(Endpoint e) {
        return e.host() + ":" + e.port();
    }

    // ------------------------------------------------------------------ faults

    /** Faults of every link that has none of its own. */
    public void faults(LinkFaults f) {
        defaults = Objects.requireNonNull(f, "faults");
        changed(null, f);
    }

    /** Faults of one link ({@code host:port} of its target); {@code null} returns it to the defaults. */
    public void faults(String link, LinkFaults f) {
        Objects.requireNonNull(link, "link");
        if (f == null) {
            linkFaults.remove(link);
        } else {
            linkFaults.put(link, f);
        }
        changed(link, f == null ? defaults : f);
    }

    /** Faults of the link to {@code target}. */
    public void faults(Endpoint target, LinkFaults f) {
        faults(linkOf(target), f);
    }

    /** The faults a link has now. */
    public LinkFaults faultsOf(String link) {
        return linkFaults.getOrDefault(link, defaults);
    }

    /** Every link's own faults and the defaults back to none. */
    public void heal() {
        linkFaults.clear();
        faults(LinkFaults.NONE);
    }

    private void changed(String link, LinkFaults f) {
        if (f.refuse()) {
            for (Connection c : open) {
                if (link == null ? !linkFaults.containsKey(c.link) : c.link.equals(link)) {
                    c.close();
                }
            }
        }
        synchronized (faultsChanged) {
            faultsChanged.notifyAll();
        }
    }

    /** Stops (true) or resumes (false) forwarding on every connection (bytes wait, nothing is lost). */
    public void stall(boolean on) {
        stalled = on;
        synchronized (faultsChanged) {
            faultsChanged.notifyAll();
        }
    }

    /** Delays every forwarded chunk by {@code perChunk} (zero: no added latency), on top of link delays. */
    public void latency(Duration perChunk) {
        latencyNanos = perChunk.toNanos();
    }

    /** Severs every open connection; new connections are accepted. */
    public void cutAll() {
        for (Connection c : open) {
            c.close();
        }
    }

    /**
     * Severs the one open connection numbered {@code connection} (the number an {@link Interceptor} is given), so a
     * test can cut the connection that carries a given block and leave the others alone; false if it is not open.
     */
    public boolean cut(long connection) {
        for (Connection c : open) {
            if (c.number == connection) {
                c.close();
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ figures

    /** What the link {@code link} saw so far. */
    public LinkStats stats(String link) {
        Counters c = counters.get(link);
        return c == null ? new LinkStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) : c.snapshot();
    }

    /** Every link seen so far and its figures. */
    public Map<String, LinkStats> allStats() {
        Map<String, LinkStats> out = new java.util.TreeMap<>();
        counters.forEach((k, v) -> out.put(k, v.snapshot()));
        return out;
    }

    /** Bytes forwarded toward upstream over every link (HTTP/2 framing and pings included). */
    public long bytesTowardUpstream() {
        return counters.values().stream().mapToLong(c -> c.up.get()).sum();
    }

    /** Bytes forwarded toward the clients over every link. */
    public long bytesTowardDownstream() {
        return counters.values().stream().mapToLong(c -> c.down.get()).sum();
    }

    /** Connections open now. */
    public int openConnections() {
        return open.size();
    }

    private Counters counters(String link) {
        return counters.computeIfAbsent(link, k -> new Counters());
    }

    /** Per-link counters. */
    private static final class Counters implements Http2FrameFaults.Counts {
        final AtomicLong connections = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final AtomicLong up = new AtomicLong();
        final AtomicLong down = new AtomicLong();
        final AtomicLong dropped = new AtomicLong();
        final AtomicLong lost = new AtomicLong();
        final AtomicLong resets = new AtomicLong();
        final AtomicLong flipped = new AtomicLong();
        final AtomicLong duplicated = new AtomicLong();
        final AtomicLong reordered = new AtomicLong();
        final AtomicLong corrupted = new AtomicLong();
        final AtomicLong oversized = new AtomicLong();

        LinkStats snapshot() {
            return new LinkStats(connections.get(), refused.get(), up.get(), down.get(), dropped.get(), lost.get(),
                    resets.get(), flipped.get(), duplicated.get(), reordered.get(), corrupted.get(), oversized.get());
        }

        @Override
        public void duplicated() {
            duplicated.incrementAndGet();
        }

        @Override
        public void reordered() {
            reordered.incrementAndGet();
        }

        @Override
        public void corrupted() {
            corrupted.incrementAndGet();
        }

        @Override
        public void oversized() {
            oversized.incrementAndGet();
        }
    }

    // ------------------------------------------------------------------ connections

    private void acceptLoop() {
        while (!closed) {
            Socket down;
            try {
                down = listener.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            long number = connectionNumbers.incrementAndGet();
            Thread.ofVirtual().name(name + "-conn-" + number).start(() -> serve(down, number));
        }
    }

    private void serve(Socket down, long number) {
        String link = upstream == null ? null : linkOf(upstream);
        try {
            down.setTcpNoDelay(true);
            Endpoint target = upstream;
            if (target == null) {
                target = readConnect(down);
                if (target == null) {
                    closeQuietly(down);
                    return;
                }
                link = linkOf(target);
            }
            Counters c = counters(link);
            c.connections.incrementAndGet();
            if (open.size() >= CONNECTIONS_MAX || faultsOf(link).refuse()) {
                c.refused.incrementAndGet();
                closeQuietly(down);
                return;
            }
            if (!awaitConnectable(link, down)) {
                closeQuietly(down);
                return;
            }
            Socket up = new Socket();
            up.connect(new InetSocketAddress(target.host(), target.port()), 10_000);
            up.setTcpNoDelay(true);
            if (upstream == null) {
                down.getOutputStream().write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                down.getOutputStream().flush();
            }
            Connection conn = new Connection(link, number, down, up);
            open.add(conn);
            if (closed) {
                conn.close();
                return;
            }
            conn.start();
        } catch (IOException | InterruptedException e) {
            if (link != null) {
                counters(link).refused.incrementAndGet();
            }
            closeQuietly(down);
        }
    }

    /**
     * Waits while the link is partitioned or blackholed (a SYN that gets no answer); false if the proxy
     * closed, the link refuses, or the client went away.
     */
    private boolean awaitConnectable(String link, Socket down) throws InterruptedException {
        while (true) {
            LinkFaults f = faultsOf(link);
            if (closed || f.refuse() || down.isClosed()) {
                return false;
            }
            if (!f.partitioned() && !f.blackhole()) {
                return true;
            }
            synchronized (faultsChanged) {
                faultsChanged.wait(50);
            }
        }
    }

    /** Reads {@code CONNECT host:port HTTP/1.x} and its headers; null (and a 400) if it is anything else. */
    private Endpoint readConnect(Socket down) throws IOException {
        down.setSoTimeout(10_000);
        InputStream in = down.getInputStream();
        StringBuilder head = new StringBuilder();
        while (head.length() < CONNECT_HEAD_BYTES_MAX && !head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.append((char) b);
        }
        down.setSoTimeout(0);
        String first = head.toString().split("\r\n", 2)[0];
        String[] parts = first.split(" ");
        if (parts.length != 3 || !parts[0].equals("CONNECT") || !parts[2].startsWith("HTTP/1.")) {
            down.getOutputStream().write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            return null;
        }
        int colon = parts[1].lastIndexOf(':');
        if (colon < 1) {
            return null;
        }
        String host = parts[1].substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new Endpoint(host, Integer.parseInt(parts[1].substring(colon + 1)));
    }

    /** A chunk and when it may leave. */
    private record Chunk(byte[] bytes, long dueNanos) {}

    /** Both directions of one proxied connection. */
    private final class Connection {
        final String link;
        final long number;
        final Socket down;
        final Socket up;
        final Counters counts;
        final Http2FrameFaults frames;
        final SplittableRandom random;
        final Set<Thread> threads = ConcurrentHashMap.newKeySet();
        volatile boolean dead;

        Connection(String link, long number, Socket down, Socket up) {
            this.link = link;
            this.number = number;
            this.down = down;
            this.up = up;
            this.counts = counters(link);
            this.random = new SplittableRandom(seed ^ (link.hashCode() * 0x9E3779B97F4A7C15L) ^ (number * 0xBF58476D1CE4E5B9L));
            this.frames = new Http2FrameFaults(() -> faultsOf(link).frames(), random.split(), counts);
        }

        void start() {
            pipe(down, up, true, random.split());
            pipe(up, down, false, random.split());
        }

        private void pipe(Socket from, Socket to, boolean towardUpstream, SplittableRandom rnd) {
            BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUED_CHUNKS_MAX);
            String dir = towardUpstream ? "up" : "down";
            Thread writer = Thread.ofVirtual().name(name + "-" + number + "-" + dir + "-write").unstarted(() -> write(queue, to, towardUpstream));
            Thread reader = Thread.ofVirtual().name(name + "-" + number + "-" + dir + "-read").unstarted(() -> read(from, queue, towardUpstream, rnd, writer));
            threads.add(writer);
            threads.add(reader);
            writer.start();
            reader.start();
        }

        private void read(Socket from, BlockingQueue<Chunk> queue, boolean towardUpstream, SplittableRandom rnd, Thread writer) {
            byte[] buf = new byte[CHUNK_BYTES];
            long lastDue = 0;
            try {
                from.setSoTimeout(IDLE_POLL_MS);
                InputStream in = from.getInputStream();
                while (!dead) {
                    int n;
                    try {
                        n = in.read(buf);
                    } catch (SocketTimeoutException idle) {
                        byte[] released = frames.onIdle(towardUpstream, System.nanoTime());
                        if (released != null) {
                            lastDue = enqueue(queue, released, lastDue, 0);
                        }
                        continue;
                    }
                    if (n < 0) {
                        break;
                    }
                    LinkFaults f = faultsOf(link);
                    if (f.refuse()) {
                        break;
                    }
                    if (f.blackhole()) {
                        counts.dropped.incrementAndGet();
                        continue;
                    }
                    byte[] bytes = java.util.Arrays.copyOf(buf, n);
                    if (upstream != null) {
                        bytes = interceptor.intercept(number, towardUpstream, bytes);
                    }
                    if (http2) {
                        bytes = frames.onBytes(towardUpstream, bytes);
                    }
                    if (f.resetProbability() > 0 && rnd.nextDouble() < f.resetProbability()) {
                        counts.resets.incrementAndGet();
                        reset();
                        break;
                    }
                    if (bytes.length > 0 && f.corruptProbability() > 0 && rnd.nextDouble() < f.corruptProbability()) {
                        bytes[rnd.nextInt(bytes.length)] ^= (byte) (1 << rnd.nextInt(8));
                        counts.flipped.incrementAndGet();
                    }
                    long delayNanos = delayNanos(f, rnd);
                    if (bytes.length > 0) {
                        lastDue = enqueue(queue, bytes, lastDue, delayNanos);
                    }
                }
            } catch (IOException | InterruptedException e) {
                // cut, reset or closed
            } finally {
                if (!dead) {
                    // end of stream: let the writer drain what is queued, then close both sides
                    try {
                        queue.put(new Chunk(null, 0));
                        writer.join(TimeUnit.SECONDS.toMillis(30));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                close();
            }
        }

        /** A chunk's delay: the link's delay, latency and jitter, plus a retransmission timeout when it is "lost". */
        private long delayNanos(LinkFaults f, SplittableRandom rnd) {
            long delayNanos = TimeUnit.MILLISECONDS.toNanos(f.delayMs()) + latencyNanos;
            if (f.jitterMs() > 0) {
                delayNanos += (long) (rnd.nextDouble() * TimeUnit.MILLISECONDS.toNanos(f.jitterMs()));
            }
            if (f.lossProbability() > 0 && rnd.nextDouble() < f.lossProbability()) {
                counts.lost.incrementAndGet();
                delayNanos += TimeUnit.MILLISECONDS.toNanos(LinkFaults.RETRANSMISSION_TIMEOUT_MS);
            }
            return delayNanos;
        }

        /** Enqueues in order: a chunk never overtakes an earlier one, whatever its own delay. */
        private long enqueue(BlockingQueue<Chunk> queue, byte[] bytes, long lastDue, long delayNanos) throws InterruptedException {
            long due = Math.max(lastDue, System.nanoTime() + delayNanos);
            queue.put(new Chunk(bytes, due));
            return due;
        }

        private void write(BlockingQueue<Chunk> queue, Socket to, boolean towardUpstream) {
            AtomicLong pace = paceUntilNanos.computeIfAbsent(link + (towardUpstream ? " up" : " down"),
                    k -> new AtomicLong(System.nanoTime()));
            try {
                OutputStream out = to.getOutputStream();
                while (!dead) {
                    Chunk c = queue.take();
                    if (c.bytes() == null) {
                        return;
                    }
                    sleepUntil(c.dueNanos());
                    awaitForwarding();
                    long rate = faultsOf(link).bandwidthBytesPerSecond();
                    if (rate > 0) {
                        long cost = c.bytes().length * 1_000_000_000L / rate;
                        sleepUntil(pace.accumulateAndGet(System.nanoTime(), (until, now) -> Math.max(until, now) + cost));
                    }
                    out.write(c.bytes());
                    out.flush();
                    (towardUpstream ? counts.up : counts.down).addAndGet(c.bytes().length);
                }
            } catch (IOException | InterruptedException e) {
                // closed
            } finally {
                if (dead) {
                    close();
                }
            }
        }

        /** Holds the writer while the proxy is stalled or the link partitioned (nothing is lost). */
        private void awaitForwarding() throws InterruptedException {
            while (!dead && !closed && (stalled || faultsOf(link).partitioned())) {
                synchronized (faultsChanged) {
                    faultsChanged.wait(50);
                }
            }
        }

        private void reset() {
            try {
                down.setSoLinger(true, 0);
                up.setSoLinger(true, 0);
            } catch (IOException e) {
                // closing anyway
            }
            close();
        }

        void close() {
            dead = true;
            open.remove(this);
            closeQuietly(down);
            closeQuietly(up);
            Thread self = Thread.currentThread();
            for (Thread t : threads) {
                if (t != self) {
                    t.interrupt(); // a writer waiting for a chunk, a reader waiting for queue room
                }
            }
        }
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long wait = nanos - System.nanoTime();
        if (wait > 0) {
            Thread.sleep(Duration.ofNanos(wait)); // the injected delay itself
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
        closed = true;
        stall(false);
        listener.close();
        cutAll();
    }

    @Override
    public String toString() {
        return name + "@" + endpoint() + (upstream == null ? " (CONNECT)" : " -> " + upstream);
    }
}
