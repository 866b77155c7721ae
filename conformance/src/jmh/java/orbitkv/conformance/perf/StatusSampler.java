package orbitkv.conformance.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * Polls one Manager's paginated {@code /cache/metadata/status} at a declared period (an absolute schedule kept by
 * one scheduling thread: a late tick is not followed by a burst of catch-up polls) and keeps the latest owner rows.
 * Each tick's poll runs on one of {@link #POLLS_IN_FLIGHT_MAX} poll threads, each with its own keep-alive connection
 * (a blocking socket, no selector or executor shared with the foreground's HTTP client), so a late answer does not
 * delay the next poll: a formal isolation run was invalid by one observer gap of 100.5 ms when the sampler waited
 * for each answer through the harness's shared {@code HttpClient}. The
 * install stamps it hands out are the Manager's own ({@code owners[].installed}), never the poll's time; the poll
 * only decides when the harness sees them. Its own cost is reported: polls, response bytes, the sampler thread's
 * CPU time and the largest gap between poll starts (the isolation contract bounds observer polling gaps).
 */
final class StatusSampler implements AutoCloseable {
    /** One owner row of the status. */
    record Row(String state, String viewId, long installedSequence, long installedMonoNs, long rows, long bytes, String lastResetCause) {}

    /** One poll: when it started and ended (harness monotonic clock) and the status it read. */
    record Poll(long startNs, long endNs, JsonNode status) {}

    /** What the sampler observed while collecting; a failure of the sampler fails collection. */
    static final class SamplerFailed extends RuntimeException {
        SamplerFailed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private static final int RESPONSE_BYTES_MAX = 8 << 20;
    private static final ByteBuffer REQUEST = KeepAliveClient.request("GET", "/cache/metadata/status?owners_limit=256", null,
            new byte[0]);
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * Polls start on the declared schedule even while an earlier answer is outstanding, on up to this many
     * connections: a Manager that answers one poll late (the smoke showed 106-136 ms answers on a loaded machine) is
     * the measured system's effect, reported as {@link #maxAnswerNanos()}, not a gap in the observer's sampling.
     */
    static final int POLLS_IN_FLIGHT_MAX = 4;
    /**
     * How this sampler polls, part of the isolation matrix's fingerprint: pairs recorded with the earlier sampler (one
     * poll at a time through the shared HttpClient) are refused by name, never mixed into a verdict with these.
     */
    static final String METHOD = "scheduled-own-connections-" + POLLS_IN_FLIGHT_MAX;

    private final InetSocketAddress manager;
    private final long periodNanos;
    private final java.util.function.Consumer<Poll> onPoll;
    private final Map<String, Row> rows = new ConcurrentHashMap<>();
    private final Object signal = new Object();
    private volatile JsonNode latest;
    private volatile boolean stopped;
    private volatile RuntimeException failure;
    private final ThreadPoolExecutor workers;
    private final ThreadLocal<Connection> connection = ThreadLocal.withInitial(Connection::new);
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile long polls;
    private volatile long reconnects;
    private volatile long skippedTicks;
    private volatile long responseBytes;
    private volatile long cpuNanos;
    private volatile long maxGapNanos;
    private volatile long maxAnswerNanos;
    private long lastStartNs = -1; // guarded by signal
    private long appliedStartNs = Long.MIN_VALUE; // guarded by signal

    /**
     * Starts polling at once.
     *
     * @param onPoll called on the sampler thread after every poll (the isolation timeline); must not block
     */
    StatusSampler(String httpBase, Duration period, java.util.function.Consumer<Poll> onPoll) {
        URI base = URI.create(httpBase);
        this.manager = new InetSocketAddress(base.getHost(), base.getPort());
        this.periodNanos = period.toNanos();
        this.onPoll = onPoll;
        this.workers = new ThreadPoolExecutor(POLLS_IN_FLIGHT_MAX, POLLS_IN_FLIGHT_MAX, 0, TimeUnit.MILLISECONDS,
                new SynchronousQueue<>(), Thread.ofPlatform().daemon(true).name("status-poll-", 1).factory());
        workers.prestartAllCoreThreads();
        this.thread = Thread.ofPlatform().daemon(true).name("status-sampler").start(this::loop);
    }

    private void loop() {
        long next = System.nanoTime();
        while (!stopped) {
            try {
                workers.execute(this::poll);
            } catch (RejectedExecutionException busy) {
                skippedTicks++; // every connection still waits for its answer: no poll starts at this tick
            }
            next += periodNanos;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait); // the declared sampling period, not a synchronization
            } else {
                next = System.nanoTime(); // late: no catch-up polls
            }
        }
    }

    /** One poll on a worker's own connection; its answer is applied unless a later-started poll's already was. */
    private void poll() {
        long cpuBefore = THREADS.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        try {
            byte[] body = connection.get().status();
            JsonNode s = JSON.readTree(body);
            Poll p = new Poll(start, System.nanoTime(), s);
            synchronized (signal) {
                noteStart(start);
                if (start > appliedStartNs) {
                    appliedStartNs = start;
                    apply(s);
                }
                responseBytes += body.length;
                maxAnswerNanos = Math.max(maxAnswerNanos, p.endNs() - p.startNs());
                polls++;
                onPoll.accept(p);
            }
        } catch (RuntimeException | IOException e) {
            if (!stopped) {
                failure = e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
            }
        }
        synchronized (signal) {
            cpuNanos += THREADS.getCurrentThreadCpuTime() - cpuBefore;
            signal.notifyAll();
        }
    }

    /**
     * The gap statistic over poll starts, noted as answers arrive: a poll answered after a later-started one is not
     * counted, so with answers out of order it can only overstate the gap (the isolation rules sort by start).
     */
    private void noteStart(long start) {
        if (lastStartNs >= 0 && start > lastStartNs) {
            maxGapNanos = Math.max(maxGapNanos, start - lastStartNs);
        }
        lastStartNs = Math.max(lastStartNs, start);
    }

    private void apply(JsonNode s) {
        for (JsonNode o : s.get("owners")) {
            JsonNode inst = o.get("installed");
            rows.put(o.at("/owner/incarnation").asText(), new Row(o.get("state").asText(),
                    o.get("view_id").isNull() ? null : o.get("view_id").asText(),
                    inst.get("sequence").isNull() ? -1 : inst.get("sequence").asLong(),
                    inst.get("mono_ns").isNull() ? -1 : inst.get("mono_ns").asLong(), o.get("rows").asLong(),
                    o.get("bytes").asLong(), o.get("last_reset_cause").isNull() ? null : o.get("last_reset_cause").asText()));
        }
        latest = s;
    }

    Optional<Row> row(String incarnation) {
        return Optional.ofNullable(rows.get(incarnation));
    }

    /** The whole status of the latest poll (null before the first). */
    JsonNode latest() {
        return latest;
    }

    /** Waits (bounded) until the owner's row satisfies {@code done}; throws naming {@code what} otherwise. */
    Row await(String incarnation, Predicate<Row> done, Duration bound, String what) {
        long deadline = System.nanoTime() + bound.toNanos();
        synchronized (signal) {
            while (true) {
                if (failure != null) {
                    throw new SamplerFailed("status sampler failed while awaiting " + what + ": " + failure, failure);
                }
                Row r = rows.get(incarnation);
                if (r != null && done.test(r)) {
                    return r;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new VisibilityHarness.CollectionFailed("no " + what + " within " + bound.toSeconds() + " s (row " + r + ")");
                }
                try {
                    signal.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new VisibilityHarness.CollectionFailed("interrupted waiting for " + what);
                }
            }
        }
    }

    /** Waits (bounded) until the latest whole status satisfies {@code done}. */
    JsonNode awaitStatus(Predicate<JsonNode> done, Duration bound, String what) {
        return awaitStatus(done, bound, what, s -> "");
    }

    /** As {@link #awaitStatus(Predicate, Duration, String)}; a timeout names {@code describe} of the last status. */
    JsonNode awaitStatus(Predicate<JsonNode> done, Duration bound, String what, java.util.function.Function<JsonNode, String> describe) {
        long deadline = System.nanoTime() + bound.toNanos();
        synchronized (signal) {
            while (true) {
                if (failure != null) {
                    throw new SamplerFailed("status sampler failed while awaiting " + what + ": " + failure, failure);
                }
                JsonNode s = latest;
                if (s != null && done.test(s)) {
                    return s;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new VisibilityHarness.CollectionFailed("no " + what + " within " + bound.toSeconds() + " s"
                            + (s == null ? "" : " (last status: " + describe.apply(s) + ")"));
                }
                try {
                    signal.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new VisibilityHarness.CollectionFailed("interrupted waiting for " + what);
                }
            }
        }
    }

    /**
     * The sampler's keep-alive connection; a broken one is opened again once per poll (counted), a second failure
     * fails the poll.
     */
    private final class Connection implements AutoCloseable {
        private KeepAliveClient client;

        Connection() {
            connections.add(this);
        }

        byte[] status() throws IOException {
            if (stopped) {
                throw new IOException("the sampler is closing");
            }
            KeepAliveClient.Response r;
            try {
                r = open().exchange(REQUEST);
            } catch (IOException broken) {
                close();
                synchronized (signal) { // poll threads reconnect concurrently
                    reconnects++;
                }
                r = open().exchange(REQUEST);
            }
            byte[] body = new byte[r.bodyLength()];
            client.buffer().get(r.bodyOffset(), body);
            if (r.status() != 200) {
                throw new IllegalStateException("status answered " + r.status() + ": " + new String(body, StandardCharsets.UTF_8));
            }
            return body;
        }

        private KeepAliveClient open() throws IOException {
            if (client == null) {
                client = new KeepAliveClient(manager, RESPONSE_BYTES_MAX);
            }
            return client;
        }

        @Override
        public void close() {
            if (client != null) {
                try {
                    client.close();
                } catch (IOException ignored) {
                    // closing a connection that broke; the poll that found it broken is what counts
                }
                client = null;
            }
        }
    }

    /** Connections opened again after one broke (keep-alive closed by the Manager). */
    long reconnects() {
        return reconnects;
    }

    long polls() {
        return polls;
    }

    long responseBytes() {
        return responseBytes;
    }

    /** CPU time of the polls (their threads) and of the scheduling thread. */
    long threadCpuNanos() {
        long scheduler = THREADS.getThreadCpuTime(thread.threadId());
        return cpuNanos + Math.max(0, scheduler);
    }

    /** The largest gap between two poll starts so far. */
    long maxGapNanos() {
        return maxGapNanos;
    }

    /** The longest a poll waited for its answer so far (the Manager's side of a late observation). */
    long maxAnswerNanos() {
        return maxAnswerNanos;
    }

    /** Ticks at which no poll started because {@link #POLLS_IN_FLIGHT_MAX} answers were outstanding. */
    long skippedTicks() {
        return skippedTicks;
    }

    /** Resets the gap statistics (at the start of a measured interval). */
    void resetGap() {
        maxGapNanos = 0;
        maxAnswerNanos = 0;
    }

    Optional<RuntimeException> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public void close() {
        stopped = true;
        try {
            thread.join(5_000);
            workers.shutdownNow(); // a poll blocked on a Manager that does not answer: interrupting closes its socket
            workers.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connections.forEach(Connection::close);
    }
}
