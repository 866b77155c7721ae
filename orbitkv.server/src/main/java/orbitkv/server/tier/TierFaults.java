package orbitkv.server.tier;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import orbitkv.inventory.Medium;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write faults of one tier's storage (issue 33 items 3 and 5: "a full SSD directory gives IO_ERROR refusals, no log
 * line, sync 200 and health ok"; "a --dram-dir tmpfs smaller than --dram ... no log line while /health says ok").
 *
 * <ul>
 *   <li>Counted: {@link #faultsTotal()} (the refusal itself is also counted by reason in {@link TierCounters}).</li>
 *   <li>Logged at most once per {@link #LOG_INTERVAL_MS} with the count of faults since the previous line, so a
 *       full disk under a save storm writes a few lines, not one per save.</li>
 *   <li>A state for {@code /health} and status: {@link #current()} is the last fault from the moment it happened
 *       until a later write of the same tier succeeds ({@link #writeSucceeded()}, logged once).</li>
 * </ul>
 * Thread-safe.
 */
public final class TierFaults {
    /** At most one log line per this interval (plus one when writes succeed again). */
    public static final long LOG_INTERVAL_MS = 10_000;
    private static final Logger LOG = LoggerFactory.getLogger(TierFaults.class);

    /** The last fault: why, what the tier said, how many so far, when the state began and when it last happened. */
    public record Fault(TierRefusal reason, String message, long faultsSinceOk, long sinceNanos, long lastNanos) {}

    private final Medium medium;
    private final LongSupplier nanoClock;
    private final Consumer<String> warn;
    private final Consumer<String> info;
    private long faultsTotal;
    private long unloggedFaults;
    private long lastLogNanos;
    private boolean loggedOnce;
    private volatile Fault current;

    TierFaults(Medium medium) {
        this(medium, System::nanoTime, LOG::warn, LOG::info);
    }

    /** For tests: an injected clock and log sinks. */
    TierFaults(Medium medium, LongSupplier nanoClock, Consumer<String> warn, Consumer<String> info) {
        this.medium = Objects.requireNonNull(medium, "medium");
        this.nanoClock = nanoClock;
        this.warn = warn;
        this.info = info;
    }

    /** A write of this tier failed for {@code reason}; {@code message} names the file and the cause. */
    void fault(TierRefusal reason, String message) {
        String line = null;
        synchronized (this) {
            long now = nanoClock.getAsLong();
            faultsTotal++;
            current = current == null ? new Fault(reason, message, 1, now, now)
                    : new Fault(reason, message, current.faultsSinceOk() + 1, current.sinceNanos(), now);
            unloggedFaults++;
            if (!loggedOnce || now - lastLogNanos >= TimeUnit.MILLISECONDS.toNanos(LOG_INTERVAL_MS)) {
                line = medium + " tier write failed (" + reason + "): " + message + "; " + unloggedFaults
                        + (unloggedFaults == 1 ? " failure" : " failures") + " since the last such line, " + faultsTotal
                        + " in all; the tier is degraded in /health until a write succeeds (next line in "
                        + LOG_INTERVAL_MS / 1000 + " s at the earliest)";
                unloggedFaults = 0;
                lastLogNanos = now;
                loggedOnce = true;
            }
        }
        if (line != null) {
            warn.accept(line);
        }
    }

    /** A write of this tier succeeded: the degraded state (if any) ends, logged once. */
    void writeSucceeded() {
        if (current == null) { // the hot path: one volatile read per successful write
            return;
        }
        String line = null;
        synchronized (this) {
            if (current == null) {
                return;
            }
            line = medium + " tier writes succeed again after " + current.faultsSinceOk() + " failures (last: "
                    + current.reason() + ": " + current.message() + ")" + (unloggedFaults > 0 ? ", " + unloggedFaults
                    + " of them not logged" : "");
            current = null;
            unloggedFaults = 0;
            loggedOnce = false; // the next fault is logged at once
        }
        info.accept(line);
    }

    /** The tier's fault state: empty while healthy. */
    public Optional<Fault> current() {
        return Optional.ofNullable(current);
    }

    /** Write faults since start. */
    public synchronized long faultsTotal() {
        return faultsTotal;
    }

    public Medium medium() {
        return medium;
    }
}
