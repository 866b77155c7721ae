package orbitkv.server.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Issue 37 item 7: the demo's restore throughput as a warm, batched figure with its case, beside a local restore and
 * a raw loopback socket moving the same bytes. One restore of all of a source Manager's blocks is one call; each arm
 * is warmed up by {@value #WARMUP} calls, then {@value #ROUNDS} rounds of one timed call per arm in ABBA order
 * (the order reversed every other round); the figure is the batch's bytes over the median call time. Every answer
 * is checked byte for byte outside the timing (a mismatch is a demo error). This is the Java demo client over HTTP
 * on a shared machine: an indication with its case, not a qualified figure ({@code scripts/bench} is).
 */
final class DemoThroughput {
    static final int WARMUP = 20;
    static final int ROUNDS = 20;

    /** The timed part of an arm: one call, its answer kept for the check. */
    private interface Call {
        Object call() throws IOException, InterruptedException;
    }

    /** One arm: a timed call, then its check outside the timing (false: status or bytes not as saved). */
    private record Arm(Call call, java.util.function.Predicate<Object> check) {}

    private final DemoSummary summary;

    DemoThroughput(DemoSummary summary) {
        this.summary = summary;
    }

    /**
     * Measures restores of {@code keys} (held by {@code source}, payloads {@code expected} in key order): from
     * {@code source} itself (local), through {@code requester} from the source over each backend, and the raw arm.
     */
    void measure(DemoClient requester, DemoClient source, String namespace, List<String> keys, List<byte[]> expected)
            throws IOException, InterruptedException {
        long bytes = expected.stream().mapToLong(b -> b.length).sum();
        String batch = keys.size() + " x " + (expected.isEmpty() ? 0 : expected.get(0).length / 1024) + " KiB";
        Map<String, Arm> arms = new LinkedHashMap<>();
        java.util.function.Predicate<Object> restored = r -> verified((DemoClient.Reply) r, keys, expected);
        arms.put("local", new Arm(() -> source.restore(namespace, keys), restored));
        arms.put("shm", new Arm(() -> requester.restore(namespace, keys, "shared-memory-preferred"), restored));
        arms.put("tcp", new Arm(() -> requester.restore(namespace, keys, "tcp"), restored));
        try (RawLoopback raw = new RawLoopback(expected)) {
            arms.put("raw loopback socket", new Arm(raw::call, b -> raw.verified((byte[]) b)));
            Map<String, long[]> nanos = run(arms);
            Map<String, String> figures = new LinkedHashMap<>();
            nanos.forEach((arm, samples) -> figures.put(arm, String.format(Locale.ROOT, "%.0f MiB/s",
                    bytes / (median(samples) / 1e9) / (1 << 20))));
            summary.warmThroughput(batch + " per restore, median of " + ROUNDS + " after " + WARMUP + " warm-up, ABBA",
                    figures);
        }
    }

    private Map<String, long[]> run(Map<String, Arm> arms) throws IOException, InterruptedException {
        Map<String, long[]> nanos = new LinkedHashMap<>();
        for (Map.Entry<String, Arm> e : arms.entrySet()) {
            nanos.put(e.getKey(), new long[ROUNDS]);
            for (int i = 0; i < WARMUP; i++) {
                check(e.getKey(), e.getValue().check().test(e.getValue().call().call()));
            }
        }
        List<String> order = new ArrayList<>(arms.keySet());
        for (int r = 0; r < ROUNDS; r++) {
            List<String> round = new ArrayList<>(order);
            if (r % 2 == 1) {
                java.util.Collections.reverse(round);
            }
            for (String name : round) {
                Arm arm = arms.get(name);
                long t = System.nanoTime();
                Object answer = arm.call().call();
                nanos.get(name)[r] = System.nanoTime() - t;
                check(name, arm.check().test(answer));
            }
        }
        return nanos;
    }

    private void check(String arm, boolean ok) {
        if (!ok) {
            summary.error("warm batched restore (" + arm + "): bytes or status not as saved");
        }
    }

    /** Whether a restore answered every key with its saved bytes (outside the timing). */
    private static boolean verified(DemoClient.Reply r, List<String> keys, List<byte[]> expected) {
        if (r.status() != 200) {
            return false;
        }
        Map<String, byte[]> back = DemoClient.unframe(r.body());
        for (int i = 0; i < keys.size(); i++) {
            if (!Arrays.equals(back.get(keys.get(i)), expected.get(i))) {
                return false;
            }
        }
        return true;
    }

    static double median(long[] samples) {
        long[] s = samples.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }

    /** A loopback socket pair: a server thread writes the batch's payloads per request; the client reads them. */
    private static final class RawLoopback implements AutoCloseable {
        private final ServerSocket server;
        private final Socket client;
        private final Thread writer;
        private final byte[] concatenated;
        private final List<byte[]> expected;

        RawLoopback(List<byte[]> expected) throws IOException {
            this.expected = expected;
            ByteBuffer all = ByteBuffer.allocate(expected.stream().mapToInt(b -> b.length).sum());
            expected.forEach(all::put);
            concatenated = all.array();
            server = new ServerSocket();
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
            client.setTcpNoDelay(true);
            writer = Thread.ofPlatform().daemon(true).name("demo-raw-loopback").start(this::serve);
        }

        private void serve() {
            try (Socket s = server.accept()) {
                s.setTcpNoDelay(true);
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                while (in.read() >= 0) { // one request byte per batch
                    out.write(concatenated);
                    out.flush();
                }
            } catch (IOException e) {
                // the client closed: the arm is over
            }
        }

        byte[] call() throws IOException {
            client.getOutputStream().write(1);
            return client.getInputStream().readNBytes(concatenated.length); // a new array, as HttpClient's
        }

        boolean verified(byte[] body) {
            int off = 0;
            for (byte[] e : expected) {
                if (!Arrays.equals(body, off, off + e.length, e, 0, e.length)) {
                    return false;
                }
                off += e.length;
            }
            return body.length == concatenated.length;
        }

        @Override
        public void close() {
            try {
                client.close();
                server.close();
                writer.join(10_000);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
