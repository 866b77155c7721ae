package orbitkv.conformance.baseline;

import java.util.Objects;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.JournalStatus;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.PublicationStamp;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SecondsHistogram;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.StateKey;

/**
 * An {@link InventorySource} whose mutations wake waiters. The baseline etcd publisher waits for new journal
 * entries through it: the exported inventory API deliberately offers no wait (the coalescing window and the
 * append signal are the session's internals, issue 18), and the publisher must read the journal only through
 * that exported API (DESIGN §4). Every put and delete of the workload goes through this wrapper, so a waiter
 * sees each append at once, as the in-module session pump does; nothing polls.
 */
public final class SignalledSource implements InventorySource {
    private final InventorySource delegate;
    private final Object appended = new Object();

    private SignalledSource(InventorySource delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    public static SignalledSource wrap(InventorySource delegate) {
        return new SignalledSource(delegate);
    }

    /**
     * The wrapped source: an InventorySession server serves only a source made by
     * {@link InventorySource#create} (it reads the journal's internals), so a streaming run hands it this one
     * while the workload still mutates through the wrapper.
     */
    public InventorySource unwrapped() {
        return delegate;
    }

    /** A fresh source with {@code config}, wrapped. */
    public static SignalledSource create(InventoryConfig config) {
        return wrap(InventorySource.create(config));
    }

    /**
     * Waits until the head sequence is above {@code sequence} or {@code timeoutNanos} passed.
     *
     * @return true iff the head is above {@code sequence}
     */
    public boolean awaitAbove(long sequence, long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        synchronized (appended) {
            while (delegate.headSequence() <= sequence) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                appended.wait(left / 1_000_000, (int) (left % 1_000_000));
            }
            return true;
        }
    }

    private <T> T signalled(T result) {
        synchronized (appended) {
            appended.notifyAll();
        }
        return result;
    }

    @Override
    public InventoryConfig config() {
        return delegate.config();
    }

    @Override
    public MutationResult put(StateKey key, Medium medium, long sizeBytes) {
        return signalled(delegate.put(key, medium, sizeBytes));
    }

    @Override
    public MutationResult delete(StateKey key, Medium medium) {
        return signalled(delegate.delete(key, medium));
    }

    @Override
    public long headSequence() {
        return delegate.headSequence();
    }

    @Override
    public long oldestRetainedSequence() {
        return delegate.oldestRetainedSequence();
    }

    @Override
    public JournalStatus status() {
        return delegate.status();
    }

    @Override
    public PublicationStamp lastPublication() {
        return delegate.lastPublication();
    }

    @Override
    public orbitkv.inventory.ResidencePage residences(java.util.Optional<orbitkv.inventory.Namespace> namespace,
            java.util.Optional<orbitkv.inventory.ResidencePosition> after, int limit) {
        return delegate.residences(namespace, after, limit);
    }

    @Override
    public ReadOutcome read(long fromExclusive, Scope scope, int intervalsMax) {
        return delegate.read(fromExclusive, scope, intervalsMax);
    }

    @Override
    public ReadOutcome read(long fromExclusive, long throughInclusive, Scope scope, int intervalsMax) {
        return delegate.read(fromExclusive, throughInclusive, scope, intervalsMax);
    }

    @Override
    public SnapshotScan openSnapshot(Scope scope) {
        return delegate.openSnapshot(scope);
    }

    @Override
    public SecondsHistogram intentionalWaitSeconds() {
        return delegate.intentionalWaitSeconds();
    }
}
