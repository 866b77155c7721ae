package orbitkv.server.runtime;

/** A started Manager as the CLI drives it: print the ready line, stop on SIGTERM, wait until stopped. */
public interface RunningManager {
    /** {@code orbitkv manager ready http=HOST:PORT peer=HOST:PORT incarnation=...}. */
    String readyLine();

    /**
     * Stop admission, drain, deregister (distributed), close. Idempotent; a second caller waits for the first.
     *
     * @return true if every admitted request finished within the drain bound
     */
    boolean shutdown() throws InterruptedException;

    /** Blocks until {@link #shutdown()} has completed. */
    void awaitStopped() throws InterruptedException;
}
