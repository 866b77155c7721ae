package orbitkv.conformance.kit;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one row under its {@link RowDeadline} (issue 26): the row's body runs on its own thread; the runner
 * waits for it at most until the deadline, whatever the target sends. When the deadline passes first, the
 * row's streams are cancelled ({@code cancel}: the kit closes its channel and sessions), its thread is
 * interrupted and given {@link #STOP_GRACE} to end, and the row FAILS naming the deadline and what it saw
 * ({@link RowLog}). A body's own waits are cut to the deadline as well, so a well-behaved row reports its
 * own failure before the runner has to stop it.
 */
final class RowRunner {
    /** How long a stopped row's thread may take to end after its streams were cancelled. */
    static final Duration STOP_GRACE = Duration.ofSeconds(5);

    /** A row's body: the outcome token it observed. */
    interface Body {
        String run(RowDeadline deadline, RowLog seen) throws Exception;
    }

    private RowRunner() {}

    /**
     * The verdict of {@code body} for {@code row} within {@code budget}; {@code cancel} ends the row's streams
     * when the deadline passes.
     */
    static Verdict run(ScenarioRow row, Duration budget, Body body, Runnable cancel) throws InterruptedException {
        RowDeadline deadline = RowDeadline.startingNow(budget);
        RowLog seen = new RowLog();
        CompletableFuture<String> outcome = new CompletableFuture<>();
        Thread worker = Thread.ofPlatform().daemon().name("kit-row " + row.id()).start(() -> {
            try {
                outcome.complete(body.run(deadline, seen));
            } catch (Throwable t) {
                outcome.completeExceptionally(t);
            }
        });
        try {
            return verdict(row, outcome.get(deadline.remaining().toNanos(), TimeUnit.NANOSECONDS));
        } catch (TimeoutException late) {
            stop(worker, cancel);
            return deadlinePassed(row, budget, seen, "the row was stopped");
        } catch (InterruptedException e) {
            stop(worker, cancel);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (deadline.expired() && !(cause instanceof ScenarioSkipped)) {
                return deadlinePassed(row, budget, seen, String.valueOf(cause.getMessage()));
            }
            return failure(row, cause);
        }
    }

    private static void stop(Thread worker, Runnable cancel) throws InterruptedException {
        try {
            cancel.run();
        } finally {
            worker.interrupt();
            worker.join(STOP_GRACE);
        }
    }

    /** The outcome compared with the row's expectation; a policy row differs instead of failing. */
    static Verdict verdict(ScenarioRow row, String outcome) {
        if (row.permission().isPresent()) {
            return outcome.equals(row.expected()) ? new Verdict.PolicyPass(outcome + "; the design: " + row.permission().get())
                    : new Verdict.PolicyDiffers("expected (this implementation's choice) " + row.expected() + ", got " + outcome
                            + "; the design: " + row.permission().get());
        }
        return outcome.equals(row.expected()) ? new Verdict.Passed(outcome)
                : new Verdict.Failed("expected " + row.expected() + ", got " + outcome);
    }

    private static Verdict failure(ScenarioRow row, Throwable cause) {
        if (cause instanceof ScenarioSkipped s) {
            return s.verdict();
        }
        // A policy row states the permitted difference as its outcome (verdict()); anything thrown, in a policy row
        // too, is a failed requirement or a broken preamble (no session, no installed view): it fails the row.
        String detail = cause instanceof AssertionError ? cause.getMessage() : cause.getClass().getSimpleName() + ": " + cause.getMessage();
        return new Verdict.Failed(detail);
    }

    private static Verdict deadlinePassed(ScenarioRow row, Duration budget, RowLog seen, String last) {
        String detail = "no " + row.expected() + " within the row deadline of " + budget.toMillis() + " ms (--row-deadline-ms; "
                + last + "); " + seen.summary();
        return new Verdict.Failed(detail); // a policy row decides within its own windows; a row that hangs fails
    }
}
