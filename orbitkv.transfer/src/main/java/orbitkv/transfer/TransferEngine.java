package orbitkv.transfer;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;

/**
 * The requester side of transfer (DESIGN §8): asks a source to authorize exact residence generations, READs
 * granted blocks into requester-owned memory over one of two backends, and releases grants after every READ of
 * them physically terminated (INV-8).
 *
 * <p>Events kept apart (INV-8): admission (the receive window takes the block's bytes, {@code
 * receiveInFlightBytesMax}, separate from the InventorySession's metadata credits), physical completion (the
 * READ's outcome, delivered only after it stopped writing), host readiness (only {@link ReadResult.Completed}:
 * bytes verified against the grant's CRC32C) and release ({@link #release}, sent only after the grant's READs
 * all terminated). A READ that times out or is cancelled keeps its credits until it physically stopped and is
 * never counted as completed.
 *
 * <p>Wiring (the Manager): {@link #create} with the validated config, the cluster, a supplier of the current
 * incarnation, a function giving a gRPC channel to a member's peer endpoint (the Manager's peer channels; the
 * engine never closes them), and the {@link TransferTransport} of its native transport (the engine builds its own
 * {@link TransferConfig#requesterEventLoopThreads()} data-plane event loops from it and stops them on close);
 * {@link #status()} for metrics; {@link #close()} on shutdown.
 *
 * <p>Threading: all methods are thread-safe and never block. Authorize and release answers complete on gRPC
 * callback threads; TCP READ outcomes on the data connection's event loop; shared-memory READs copy on the
 * engine's one copy thread and complete there. Dependants must not block.
 */
public interface TransferEngine extends AutoCloseable {
    /** An engine on the process's monotonic clock. */
    static TransferEngine create(TransferConfig config, ClusterIdentity cluster, Supplier<Incarnation> self,
            Function<Endpoint, io.grpc.Channel> peerChannels, TransferTransport transport) {
        return create(config, cluster, self, peerChannels, transport, System::nanoTime);
    }

    /**
     * An engine whose data connections run TLS when {@code tls} is present (issue 33: the peer mutual-TLS files; each
     * connection presents the member certificate and accepts only a source certificate that names the source node).
     */
    static TransferEngine create(TransferConfig config, ClusterIdentity cluster, Supplier<Incarnation> self,
            Function<Endpoint, io.grpc.Channel> peerChannels, TransferTransport transport,
            java.util.Optional<DataChannelTls> tls) {
        return orbitkv.transfer.requester.Engine.create(config, cluster, self, peerChannels, transport, System::nanoTime,
                tls.orElse(null));
    }

    /** An engine with an injected monotonic clock (nanoseconds) for grant deadlines and READ timeouts. */
    static TransferEngine create(TransferConfig config, ClusterIdentity cluster, Supplier<Incarnation> self,
            Function<Endpoint, io.grpc.Channel> peerChannels, TransferTransport transport, LongSupplier monotonicNanos) {
        return orbitkv.transfer.requester.Engine.create(config, cluster, self, peerChannels, transport, monotonicNanos);
    }

    /**
     * Asks {@code request.source()} to validate and pin the blocks. Never deletes or changes anything of the
     * requester's index: refusals are request-local evidence for the caller (ROUTE-7).
     *
     * <p>The stage completes on the transport's event loop (no executor hand-off: issue 24 item 4), so a dependent
     * stage that blocks must be attached with an {@code *Async} method and an executor of its own.
     */
    CompletionStage<AuthorizeOutcome> authorize(GrantRequest request);

    /**
     * READs granted block {@code block} (its index in {@link Grant#blocks()}) into {@code destination} at offset 0.
     * Refusals (credits, bounds, state) come back as {@link ReadResult.Refused} without touching the destination.
     * Each block of a grant is READ at most once: no blind retry after a payload failure (ROUTE-8).
     *
     * @param grant a grant issued by this engine
     * @param policy which backends may serve it
     * @param timeout the READ's deadline from now; the outcome then is {@link ReadResult.TimedOut}
     * @throws IllegalArgumentException if {@code grant} was not issued by this engine
     * @throws IndexOutOfBoundsException if {@code block} is not an index of {@code grant.blocks()}
     */
    ReadHandle read(Grant grant, int block, Destination destination, BackendPolicy policy, Duration timeout);

    /**
     * Releases {@code grant}: no READ of it starts afterwards, and the Release is sent once every READ of it
     * physically terminated. Idempotent: later calls return the same stage.
     *
     * @throws IllegalArgumentException if {@code grant} was not issued by this engine
     */
    CompletionStage<ReleaseOutcome> release(Grant grant);

    /** A snapshot of the engine's counters and windows. */
    TransferEngineStatus status();

    /**
     * Closes data connections (their READs end as {@code CONNECTION_LOST} once stopped), unmaps arenas, asks
     * sources to release the grants it still tracks (best effort; their expiry is the backstop), and stops the
     * engine's event loops. Idempotent.
     */
    @Override
    void close();
}
