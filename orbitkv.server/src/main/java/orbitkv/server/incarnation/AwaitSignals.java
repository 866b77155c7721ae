package orbitkv.server.incarnation;

import java.util.Objects;
import orbitkv.index.GlobalIndex;
import orbitkv.inventory.ViewReceiver;

/**
 * The await waiters of one incarnation and what wakes them (API-4, API-5): the bounded {@link AwaitRegistry}
 * ({@code --await-waiters-max}, refusal {@code TOO_MANY_WAITERS}) and the {@link InstallSignallingReceiver} over the
 * GlobalIndex that the subscriber sessions apply into. Built before the session ends, since they need the receiver;
 * the incarnation's {@link ClusterMetadata} is built over it afterwards (issue 34 item 2).
 */
public final class AwaitSignals {
    private final AwaitRegistry registry;
    private final ViewReceiver receiver;

    private AwaitSignals(AwaitRegistry registry, ViewReceiver receiver) {
        this.registry = registry;
        this.receiver = receiver;
    }

    /**
     * @param waitersMax the await waiter bound (--await-waiters-max)
     */
    public static AwaitSignals over(GlobalIndex index, int waitersMax) {
        Objects.requireNonNull(index, "index");
        AwaitRegistry registry = new AwaitRegistry(waitersMax);
        return new AwaitSignals(registry, new InstallSignallingReceiver(index, registry::signal));
    }

    /**
     * The receiver to hand to the subscriber sessions: the GlobalIndex, waking await waiters after every apply and
     * commit.
     */
    public ViewReceiver viewReceiver() {
        return receiver;
    }

    /**
     * IDX-6: the receiver for the sessions of another scope generation's {@code index}: the same waiters (one
     * {@code --await-waiters-max} bound) wake after its applies and commits.
     */
    public ViewReceiver receiverOver(GlobalIndex index) {
        return new InstallSignallingReceiver(Objects.requireNonNull(index, "index"), registry::signal);
    }

    /** Wakes every waiter to re-check (a membership event). */
    void signal() {
        registry.signal();
    }

    AwaitRegistry registry() {
        return registry;
    }

    /** Await requests waiting now. */
    public int waiting() {
        return registry.waiting();
    }

    /** Await requests refused by the waiter bound. */
    public long refusedTooMany() {
        return registry.refusedTooMany();
    }

    /** Await requests that timed out. */
    public long timedOut() {
        return registry.timedOut();
    }
}
