package orbitkv.inventory.session;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.UUID;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.codec.SourceFrameDecoder;
import orbitkv.inventory.source.SourceInventory;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;

/**
 * A production {@link SourceCore} and a production {@link RequesterCore} wired to each other by a test, without
 * threads, sockets or clocks (issue 38): frames are handed over at once, in order, and time moves only when the test
 * calls {@link #advanceTo}; every timer of either end fires exactly at its due time. The source's inventory reads the
 * same virtual time.
 */
final class CorePair implements SourceCore.Host {
    final Incarnation sourceId = new Incarnation(new NodeId("src"), new NodeEpoch(1), new UUID(38, 11));
    final Incarnation requesterId = new Incarnation(new NodeId("req"), new NodeEpoch(1), new UUID(38, 12));
    final ClockedSessions.Recorder receiver = new ClockedSessions.Recorder();
    final InventorySource source;
    final SourceCore sourceCore;
    final RequesterCore requesterCore;
    final SessionConfig config;
    final UUID stream = new UUID(38, 13);
    long now = ClockedSessions.ORIGIN_NANOS;
    private final HashSet<UUID> committed = new HashSet<>();
    private final Runnable appendWake = () -> wake = true;
    private boolean wake;
    private final ArrayDeque<Runnable> inFlight = new ArrayDeque<>();
    /** The source's pump steps ask this whether to yield between actions (ROUTE-10 tests); never by default. */
    java.util.function.BooleanSupplier yieldNow = () -> false;
    /** Every frame the source sent, as encoded, in order. */
    final java.util.ArrayList<byte[]> sent = new java.util.ArrayList<>();

    CorePair(InventoryConfig inventory, SessionConfig config) {
        this.config = config;
        this.source = InventorySource.create(inventory, () -> now);
        CoreDriver.AdmitAll view = new CoreDriver.AdmitAll();
        this.sourceCore = new SourceCore(new SourceCore.Peer(ClockedSessions.CLUSTER, sourceId, config, (SourceInventory) source,
                new SourceCounters(), () -> view, Optional.empty(), () -> new UUID(38, 14), new SplittableRandom(38)), this);
        this.requesterCore = new RequesterCore(new RequesterCore.Peer(ClockedSessions.CLUSTER, requesterId, sourceId, Scope.all(),
                config, receiver, new RequesterCounters(), () -> view));
    }

    /** The requester opens the stream; everything that follows at this instant is delivered. */
    void connect() {
        fromRequester(requesterCore.connect(now, stream, receiver.installedCursor(sourceId), true));
        settle();
    }

    /** Time passes to {@code t}: each end's due timer fires (in order of due time), then everything settles. */
    void advanceTo(long t) {
        if (t < now) {
            throw new IllegalArgumentException("time goes forward only");
        }
        now = t;
        if (sourceCore.deadlineNanos() <= now) {
            fromSource(sourceCore.pump(now, yieldNow));
        }
        if (requesterCore.deadlineNanos() <= now) {
            fromRequester(requesterCore.onTimer(now));
        }
        settle();
    }

    /** Runs every frame in flight and every raised wake-up at the current instant. */
    void settle() {
        for (int i = 0; i < 100_000; i++) {
            if (!inFlight.isEmpty()) {
                inFlight.poll().run();
            } else if (wake || sourceCore.deadlineNanos() <= now) {
                wake = false;
                fromSource(sourceCore.pump(now, yieldNow));
            } else {
                return;
            }
        }
        throw new AssertionError("the pair does not settle");
    }

    /** The requester asks a barrier (FlushThrough through {@code target}); nothing is delivered yet. */
    void requesterFlush(long target) {
        fromRequester(requesterCore.flushThrough(target));
    }

    /** Delivers the oldest message in flight, and nothing else. */
    void deliverNext() {
        inFlight.poll().run();
    }

    private void fromRequester(List<RequesterCore.Effect> effects) {
        for (RequesterCore.Effect e : effects) {
            if (e instanceof RequesterCore.Effect.Send s) {
                inFlight.add(() -> fromSource(sourceCore.onFrame(now, new Inbound.Parsed<>(s.frame(), s.frame().getSerializedSize()))));
            }
        }
    }

    private void fromSource(List<SourceCore.Effect> effects) {
        for (SourceCore.Effect e : effects) {
            switch (e) {
                case SourceCore.Effect.Send s -> {
                    byte[] bytes = s.frame().toByteArray();
                    sent.add(bytes);
                    inFlight.add(() -> fromRequester(requesterCore.onFrame(stream, now, decode(bytes))));
                }
                case SourceCore.Effect.Complete c -> inFlight.add(() -> fromRequester(requesterCore.onStreamEnd(stream, Optional.empty())));
                case SourceCore.Effect.Wake w -> wake = true;
                case SourceCore.Effect.Reached r -> { }
            }
        }
    }

    private Inbound<SourceFrame> decode(byte[] bytes) {
        return switch (SourceFrameDecoder.decode(bytes, config.frameDecodedBytesMax())) {
            case SourceFrameDecoder.Result.Read r -> new Inbound.Read(r, bytes.length);
            case SourceFrameDecoder.Result.UseGenerated g -> {
                try {
                    yield new Inbound.Parsed<>(SourceFrame.parseFrom(bytes), bytes.length);
                } catch (com.google.protobuf.InvalidProtocolBufferException ex) {
                    throw new AssertionError(ex);
                }
            }
        };
    }

    @Override
    public ErrorCause stoppedCause() {
        return null;
    }

    @Override
    public ErrorCause admit() {
        return null;
    }

    @Override
    public void removed() {
    }

    @Override
    public boolean isCommittedView(UUID viewId) {
        return committed.contains(viewId);
    }

    @Override
    public void committed(UUID viewId) {
        committed.add(viewId);
    }

    @Override
    public Runnable appendWake() {
        return appendWake;
    }
}
