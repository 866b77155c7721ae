package orbitkv.transfer.requester;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import orbitkv.transfer.Backend;
import orbitkv.transfer.Destination;
import orbitkv.transfer.ReadHandle;
import orbitkv.transfer.ReadResult;
import orbitkv.transfer.PeerRouteClass;
import orbitkv.transfer.SharedMemoryFallback;

/**
 * One admitted READ (INV-8). Its outcome is completed exactly once by {@link #finish}, which the backend calls
 * only after the READ physically stopped; {@link #finish} zero-fills the destination range of every outcome but
 * {@code Completed} and {@code Refused} (so nothing partial is ever exposed), then returns the admission
 * resources, then completes the outcome.
 */
final class Read extends Exchange implements ReadHandle {
    final Engine engine;
    final IssuedGrant grant;
    final int index;
    final Destination destination;
    final int crc32c;
    final PeerRouteClass route;
    final Backend backend;
    final SharedMemoryFallback fallback;
    private final CompletableFuture<ReadResult> outcome = new CompletableFuture<>();
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile boolean cancelRequested;
    /** How the backend stops this READ on cancel; set once the backend runs it. */
    private volatile Runnable stopper;

    Read(Engine engine, IssuedGrant grant, int index, Destination destination, long length, int crc32c,
            PeerRouteClass route, Backend backend, SharedMemoryFallback fallback, long admittedNanos, long deadlineNanos,
            long readId) {
        super(length, admittedNanos, deadlineNanos, readId);
        this.engine = engine;
        this.grant = grant;
        this.index = index;
        this.destination = destination;
        this.crc32c = crc32c;
        this.route = route;
        this.backend = backend;
        this.fallback = fallback;
    }

    @Override
    public CompletionStage<ReadResult> outcome() {
        return outcome;
    }

    @Override
    public void cancel() {
        cancelRequested = true;
        Runnable s = stopper;
        if (s != null) {
            s.run();
        }
    }

    @Override
    boolean cancelRequested() {
        return cancelRequested;
    }

    @Override
    void onCancel(Runnable s) {
        stopper = s;
        if (cancelRequested) {
            s.run();
        }
    }

    boolean finished() {
        return finished.get();
    }

    @Override
    orbitkv.membership.NodeId sourceNode() {
        return grant.source.incarnation().nodeId();
    }

    /** The one terminal transition; later calls do nothing. Call only once the READ physically stopped. */
    @Override
    void finish(ReadResult o) {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        if (!(o instanceof ReadResult.Completed) && !(o instanceof ReadResult.Refused)) {
            try {
                destination.segment().asSlice(0, length).fill((byte) 0);
            } catch (IllegalStateException e) {
                // The requester closed its own memory under the READ: nothing left to expose or clear.
            }
        }
        engine.terminated(this, o);
        outcome.complete(o);
    }

    /** A completed-immediately handle for a READ refused before admission. */
    static ReadHandle refused(ReadResult.Refused r) {
        CompletableFuture<ReadResult> f = CompletableFuture.completedFuture(r);
        return new ReadHandle() {
            @Override
            public CompletionStage<ReadResult> outcome() {
                return f;
            }

            @Override
            public void cancel() {}
        };
    }
}
