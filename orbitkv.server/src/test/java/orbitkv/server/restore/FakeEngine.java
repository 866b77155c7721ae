package orbitkv.server.restore;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.transfer.ReceiveCredits;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.Backend;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.Destination;
import orbitkv.transfer.Grant;
import orbitkv.transfer.GrantRequest;
import orbitkv.transfer.ReadHandle;
import orbitkv.transfer.ReadResult;
import orbitkv.transfer.PeerRouteClass;
import orbitkv.transfer.SharedMemoryFallback;
import orbitkv.transfer.TransferEngine;
import orbitkv.transfer.TransferEngineStatus;

/**
 * A transfer engine without Netty for the restore ports' unit tests: Authorize answers what the test set (a whole
 * grant by default); each READ waits until the test completes it, and counts how many are in flight at once.
 */
final class FakeEngine implements TransferEngine {
    static final Incarnation SELF = Incarnation.random(new NodeId("requester"), new NodeEpoch(1));
    static final Incarnation SOURCE = Incarnation.random(new NodeId("source"), new NodeEpoch(3));

    /** One submitted READ: its block, the destination and the outcome the test completes. */
    record Read(int block, Destination destination, CompletableFuture<ReadResult> outcome, boolean[] cancelled,
            AtomicInteger inFlight) {
        /** Fills the destination with {@code value} and completes the READ over TCP. */
        void complete(byte value) {
            ByteBuffer b = destination.segment().asByteBuffer();
            while (b.hasRemaining()) {
                b.put(value);
            }
            end(new ReadResult.Completed(Backend.TCP, PeerRouteClass.PEER_DRAM, destination.capacityBytes(), 1,
                    SharedMemoryFallback.NONE));
        }

        /** Ends the READ with {@code o}: no longer in flight before anyone hears of it. */
        void end(ReadResult o) {
            if (!outcome.isDone()) {
                inFlight.decrementAndGet();
                outcome.complete(o);
            }
        }
    }

    volatile java.util.function.Function<GrantRequest, AuthorizeOutcome> authorize = r -> new AuthorizeOutcome.Granted(
            grant(r.blocks().stream().map(b -> (BlockResult) new BlockResult.Granted(b, 1, 0)).toList()));
    final List<Read> reads = new ArrayList<>();
    final AtomicInteger released = new AtomicInteger();
    final AtomicInteger authorizeCalls = new AtomicInteger();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger inFlightPeak = new AtomicInteger();
    /** When set, every READ completes as soon as it is submitted, its bytes {@code 0x60 + block} (prefetch tests). */
    volatile boolean autoComplete;

    /** Grants every block asked at {@code sizeBytes} and completes every READ at once ({@link #autoComplete}). */
    void grantEveryBlock(long sizeBytes) {
        autoComplete = true;
        authorize = r -> new AuthorizeOutcome.Granted(grant(r.blocks().stream()
                .map(b -> (BlockResult) new BlockResult.Granted(b, sizeBytes, 0)).toList()));
    }

    static Grant grant(List<BlockResult> blocks) {
        UUID id = UUID.randomUUID();
        return new Grant() {
            @Override
            public UUID id() {
                return id;
            }

            @Override
            public Incarnation source() {
                return SOURCE;
            }

            @Override
            public Duration expiry() {
                return Duration.ofSeconds(10);
            }

            @Override
            public long localDeadlineNanos() {
                return System.nanoTime() + 10_000_000_000L;
            }

            @Override
            public List<BlockResult> blocks() {
                return blocks;
            }

            @Override
            public boolean sharedMemoryEligible() {
                return false;
            }
        };
    }

    @Override
    public CompletionStage<AuthorizeOutcome> authorize(GrantRequest request) {
        authorizeCalls.incrementAndGet();
        return CompletableFuture.completedFuture(authorize.apply(request));
    }

    @Override
    public synchronized ReadHandle read(Grant grant, int block, Destination destination, BackendPolicy policy,
            Duration timeout) {
        CompletableFuture<ReadResult> outcome = new CompletableFuture<>();
        boolean[] cancelled = {false};
        inFlightPeak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        Read read = new Read(block, destination, outcome, cancelled, inFlight);
        reads.add(read);
        if (autoComplete) {
            read.complete((byte) (0x60 + block));
        }
        return new ReadHandle() {
            @Override
            public CompletionStage<ReadResult> outcome() {
                return outcome;
            }

            @Override
            public void cancel() {
                cancelled[0] = true;
                read.end(new ReadResult.Cancelled());
            }
        };
    }

    synchronized Read read(int i) {
        return reads.get(i);
    }

    synchronized int readsSubmitted() {
        return reads.size();
    }

    @Override
    public CompletionStage<orbitkv.transfer.ReleaseOutcome> release(Grant grant) {
        released.incrementAndGet();
        return new CompletableFuture<>();
    }

    @Override
    public TransferEngineStatus status() {
        throw new UnsupportedOperationException("not used by the restore ports");
    }

    @Override
    public void close() {}

    /** The requester's transfer ends over this engine: {@code source} admitted, the given window and pipeline. */
    RestoreTransfer transfer(long windowBytes, int readsPerRoute, boolean sourceAdmitted) {
        return transfer(windowBytes, readsPerRoute, sourceAdmitted, Optional.empty());
    }

    /** As {@link #transfer(long, int, boolean)}, with the node admission window {@code admission} (issue 39). */
    RestoreTransfer transfer(long windowBytes, int readsPerRoute, boolean sourceAdmitted,
            Optional<orbitkv.server.admission.NodeAdmissionService> admission) {
        ReceiveCredits credits = new ReceiveCredits(windowBytes);
        FakeEngine engine = this;
        return new RestoreTransfer() {
            @Override
            public Incarnation self() {
                return SELF;
            }

            @Override
            public Optional<Member> member(Incarnation owner) {
                return sourceAdmitted && owner.equals(SOURCE) ? Optional.of(new Member(SOURCE,
                        new Endpoint("127.0.0.1", 1), new Endpoint("127.0.0.1", 2), "test")) : Optional.empty();
            }

            @Override
            public TransferEngine engine() {
                return engine;
            }

            @Override
            public ReceiveCredits receiveCredits() {
                return credits;
            }

            @Override
            public Optional<orbitkv.server.admission.NodeAdmissionService> admission() {
                return admission;
            }

            @Override
            public BackendPolicy defaultBackend() {
                return BackendPolicy.TCP_ONLY;
            }

            @Override
            public long authorizeTimeoutMs() {
                return 5_000;
            }

            @Override
            public int readsInFlightPerRoute() {
                return readsPerRoute;
            }
        };
    }
}
