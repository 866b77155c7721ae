package orbitkv.conformance.perf;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import orbitkv.conformance.manager.ManagerApi;

/**
 * Polls one Manager's paginated {@code /cache/metadata/status} on one platform thread at a declared period (an
 * absolute schedule: a late poll is not followed by a burst of catch-up polls) and keeps the latest owner rows. The
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

    private final ManagerApi api;
    private final long periodNanos;
    private final java.util.function.Consumer<Poll> onPoll;
    private final Map<String, Row> rows = new ConcurrentHashMap<>();
    private final Object signal = new Object();
    private volatile JsonNode latest;
    private volatile boolean stopped;
    private volatile RuntimeException failure;
    private volatile long polls;
    private volatile long responseBytes;
    private volatile long threadCpuNanos;
    private volatile long maxGapNanos;
    private final Thread thread;

    /**
     * Starts polling at once.
     *
     * @param onPoll called on the sampler thread after every poll (the isolation timeline); must not block
     */
    StatusSampler(ManagerApi api, Duration period, java.util.function.Consumer<Poll> onPoll) {
        this.api = api;
        this.periodNanos = period.toNanos();
        this.onPoll = onPoll;
        this.thread = Thread.ofPlatform().daemon(true).name("status-sampler").start(this::loop);
    }

    private void loop() {
        long next = System.nanoTime();
        long lastStart = -1;
        while (!stopped) {
            long start = System.nanoTime();
            if (lastStart >= 0) {
                maxGapNanos = Math.max(maxGapNanos, start - lastStart);
            }
            lastStart = start;
            try {
                ManagerApi.Reply r = api.get("/cache/metadata/status?owners_limit=256");
                if (r.status() != 200) {
                    throw new IllegalStateException("status answered " + r.status() + ": " + r.text());
                }
                JsonNode s = r.json();
                responseBytes += r.body().length;
                for (JsonNode o : s.get("owners")) {
                    JsonNode inst = o.get("installed");
                    rows.put(o.at("/owner/incarnation").asText(), new Row(o.get("state").asText(),
                            o.get("view_id").isNull() ? null : o.get("view_id").asText(),
                            inst.get("sequence").isNull() ? -1 : inst.get("sequence").asLong(),
                            inst.get("mono_ns").isNull() ? -1 : inst.get("mono_ns").asLong(), o.get("rows").asLong(),
                            o.get("bytes").asLong(), o.get("last_reset_cause").isNull() ? null : o.get("last_reset_cause").asText()));
                }
                latest = s;
                polls++;
                onPoll.accept(new Poll(start, System.nanoTime(), s));
            } catch (RuntimeException e) {
                if (!stopped) {
                    failure = e;
                }
            }
            threadCpuNanos = THREADS.getCurrentThreadCpuTime();
            synchronized (signal) {
                signal.notifyAll();
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

    long polls() {
        return polls;
    }

    long responseBytes() {
        return responseBytes;
    }

    long threadCpuNanos() {
        return threadCpuNanos;
    }

    /** The largest gap between two poll starts so far. */
    long maxGapNanos() {
        return maxGapNanos;
    }

    /** Resets the gap statistic (at the start of a measured interval). */
    void resetGap() {
        maxGapNanos = 0;
    }

    Optional<RuntimeException> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public void close() {
        stopped = true;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
