package orbitkv.inventory.session;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.ViewReceiver;
import orbitkv.inventory.codec.FrameCodec;
import orbitkv.inventory.codec.SourceFrameDecoder;
import orbitkv.inventory.wire.Ack;
import orbitkv.inventory.wire.AllNamespaces;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.FlushThrough;
import orbitkv.inventory.wire.InventorySessionGrpc;
import orbitkv.inventory.wire.NamespaceList;
import orbitkv.inventory.wire.NeedRepair;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.ResumeFrom;
import orbitkv.inventory.wire.ResumePoint;
import orbitkv.inventory.wire.ScopeSpec;
import orbitkv.inventory.wire.SnapshotBegin;
import orbitkv.inventory.wire.SnapshotCommit;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.CrashPoints;
import orbitkv.membership.Incarnation;
import orbitkv.membership.ProtocolClock;
import orbitkv.membership.RetryBackoff;
import orbitkv.membership.MembershipView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requester end of one directed session to one source incarnation (SES-2..SES-14, DELTA-7..DELTA-12,
 * SNAP-6..SNAP-10), driven by the {@link RequesterState} machine. A virtual thread runs the connect loop:
 * open a stream with a fresh random session id, resume only from the receiver's installed cursor (SNAP-8),
 * and on any end back off exponentially with jitter before reconnecting; it waits only on its one
 * {@link WakeSignal}, raised when a stream ends or the session stops, or until the stream's receive deadline.
 * A source sends liveness after {@code livenessIntervalMs} without any frame (DELTA-13), so a stream that
 * brings no frame at all for {@value #SILENT_LIVENESS_INTERVALS_MAX} liveness intervals is dead on some
 * path that reports nothing (a wedged source, a half-open connection, a stalled proxy): the loop cancels
 * it, drops the channel's connection ({@link ManagedChannel#enterIdle()}) and reconnects, so the installed
 * view is resumed before its receipt age passes the freshness budget (IDX-12) instead of staying stale
 * forever behind a stream that looks alive. Frames are handled on the stream's
 * gRPC callbacks in order, validated and decoded before the receiver is called (DELTA-4), and
 * acknowledged after application (DELTA-12).
 *
 * <p>Threads: the connect loop, the gRPC callbacks of the current stream (serialized by gRPC), the shared
 * ACK timer, and callers of {@link #stop}, {@link #flushThrough} and {@link #status}. One lock,
 * {@link #lock}, guards the machine's state (and so the staging and installed view ids the ACK timer
 * reads), the current stream's request observer and its ACK bookkeeping. No frame is applied under it (a
 * commit can take long and the timer is shared); only an ACK reads the receiver's installed cursor there.
 */
final class RequesterSession {
    private static final Logger LOG = LoggerFactory.getLogger(RequesterSession.class);
    /** Bound on the graceful close of a stopped session's channel. */
    static final long CHANNEL_DRAIN_MS = 1_000;
    /**
     * Liveness intervals without any source frame after which a stream is treated as dead and replaced
     * (DELTA-13, IDX-12). Three: one interval late is scheduling noise; the freshness budget must exceed the
     * liveness interval (BND-6), so a stream replaced after three still resumes close to the budget.
     */
    static final int SILENT_LIVENESS_INTERVALS_MAX = 3;
    /** The status cause of a stream replaced for silence (not a wire cause: nothing reached the source). */
    static final String RECEIVE_SILENCE_CAUSE = "RECEIVE_SILENCE";

    private final Subscriber owner;
    private final Incarnation source;
    private final ManagedChannel channel;
    private final MethodDescriptor<RequesterFrame, Inbound<SourceFrame>> method;
    private final ViewReceiver receiver;
    private final RequesterCounters metrics;
    /** The session's time and timers (issue 25): the subscriber's clock, never the host clock read directly. */
    private final ProtocolClock clock;
    private final WakeSignal wake;
    private final AtomicLong connects = new AtomicLong();
    private final AtomicLong installs = new AtomicLong();
    /** The wire cause of the last close; volatile: written by stream callbacks or a stopper, read by status. */
    private volatile String lastErrorCause = "";
    /** True from a SESSION_LIMIT refusal (logged once) until the source accepts an Open again (issue 33). */
    private volatile boolean limitRefused;

    private final Object lock = new Object();
    /** Guarded by {@link #lock}. */
    private RequesterState state = new RequesterState.Idle();

    RequesterSession(Subscriber owner, Incarnation source, ManagedChannel channel) {
        this.owner = owner;
        this.source = source;
        this.channel = channel;
        this.receiver = owner.receiver();
        this.metrics = owner.counters();
        this.clock = owner.clock();
        this.wake = new WakeSignal(clock);
        this.method = InventorySessionGrpc.getSessionMethod().toBuilder(ProtoUtils.marshaller(RequesterFrame.getDefaultInstance()),
                Inbound.sourceFrames(owner.config().frameEncodedBytesMax(), owner.config().frameDecodedBytesMax())).build();
    }

    Incarnation source() {
        return source;
    }

    void start() {
        Thread.ofVirtual().name("inventory-session-requester-" + source.nodeId()).start(this::run);
    }

    SubscriptionStatus.PeerSession status() {
        return new SubscriptionStatus.PeerSession(source, state().status(), connects.get(), installs.get(), lastErrorCause);
    }

    private RequesterState state() {
        synchronized (lock) {
            return state;
        }
    }

    /** Under {@link #lock}: the one place the state changes; a refusal or an ignored event changes nothing. */
    private RequesterState.Outcome transitionLocked(RequesterState.Event event) {
        RequesterState.Outcome out = RequesterState.next(state, event);
        if (out instanceof RequesterState.Outcome.Moved m) {
            state = m.to();
        }
        return out;
    }

    boolean flushThrough(long target) {
        synchronized (lock) {
            Stream s = currentLocked();
            if (s == null || !state.accepted()) {
                return false;
            }
            s.sendLocked(RequesterFrame.newBuilder().setSessionId(s.wireSession)
                    .setFlushThrough(FlushThrough.newBuilder().setTargetSequence(target)).build());
            return true;
        }
    }

    /** Stops for good: closes the stream with {@code cause}, discards staging and shuts the channel down. */
    void stop(ErrorCause cause, ResetCause reset) {
        RequesterState left;
        synchronized (lock) {
            left = state;
            if (!(transitionLocked(new RequesterState.Stop()) instanceof RequesterState.Outcome.Moved)) {
                return; // already stopped
            }
            Stream s = current;
            current = null;
            if (s != null) {
                s.closeLocked(Optional.of(new Refusal(cause, "requester stopped the session")));
            }
        }
        if (left instanceof RequesterState.Staging) {
            metrics.resets.inc(reset);
        }
        receiver.discardStaging(source, reset); // SNAP-10; idempotent
        wake.raise();
        closeChannelAfterError();
    }

    /**
     * A graceful shutdown lets the Error frame and the half-close just sent reach the source (a
     * {@code shutdownNow} here could cancel the call first, and the source would see CANCELLED instead of
     * the named cause); the channel is forced closed after {@value #CHANNEL_DRAIN_MS} ms at the latest.
     */
    private void closeChannelAfterError() {
        channel.shutdown();
        Thread.ofVirtual().name("orbitkv-session-close-" + source.nodeId()).start(() -> {
            try {
                if (!channel.awaitTermination(CHANNEL_DRAIN_MS, TimeUnit.MILLISECONDS)) {
                    channel.shutdownNow();
                }
            } catch (InterruptedException e) {
                channel.shutdownNow();
                Thread.currentThread().interrupt();
            }
        });
    }

    // ---------------------------------------------------------------- the connect loop

    /** Guarded by {@link #lock}: the stream whose id the state names, if any. */
    private Stream current;

    private Stream currentLocked() {
        Stream s = current;
        return s != null && state.streamId().equals(Optional.of(s.sessionId)) ? s : null;
    }

    private void run() {
        RetryBackoff.Sequence backoff = owner.config().reconnectBackoff().sequence();
        try {
            while (true) {
                Optional<Stream> opened = connect();
                if (opened.isEmpty() && state() instanceof RequesterState.Stopped) {
                    return;
                }
                if (opened.isPresent()) {
                    boolean progressed = awaitEnd(opened.get());
                    if (progressed) {
                        backoff.reset();
                    }
                }
                long sleepNanos = TimeUnit.MILLISECONDS.toNanos(backoff.nextDelayMs());
                if (!sleepUnlessStopped(clock.nanoTime() + sleepNanos)) {
                    return;
                }
            }
        } catch (InterruptedException e) { // nothing in this package interrupts the loop; end it as a stop would
            LOG.debug("requester session to {} interrupted", source);
        }
    }

    /** SES-5: a stream opens only while both incarnations are admitted; else the session backs off. */
    private Optional<Stream> connect() {
        Optional<InstalledCursor> resume = receiver.installedCursor(source); // outside the lock: the index's own
        boolean admitted = owner.admits(source);
        Stream s = new Stream();
        synchronized (lock) {
            if (state instanceof RequesterState.Stopped) {
                return Optional.empty();
            }
            transitionLocked(admitted ? new RequesterState.Connect(s.sessionId, resume) : new RequesterState.BackOff());
            if (!admitted) {
                return Optional.empty();
            }
            current = s;
        }
        connects.incrementAndGet();
        try {
            s.open(resume);
        } catch (RuntimeException e) { // a channel that throws (a bug, not a path failure): this stream ends, the loop goes on
            LOG.warn("session to {}: opening a stream failed", source, e);
            s.fail(new Refusal(ErrorCause.INTERNAL, "opening the stream failed: " + e), ResetCause.DISCONNECT);
        }
        return Optional.of(s);
    }

    /**
     * Waits until {@code s} is no longer the current stream, ending it once it has been silent for
     * {@link #SILENT_LIVENESS_INTERVALS_MAX} liveness intervals; true if it made progress (DELTA-7 aside).
     */
    private boolean awaitEnd(Stream s) throws InterruptedException {
        long silenceMaxNanos = TimeUnit.MILLISECONDS.toNanos(owner.config().livenessIntervalMs()) * SILENT_LIVENESS_INTERVALS_MAX;
        while (true) {
            synchronized (lock) {
                if (!state.streamId().equals(Optional.of(s.sessionId))) {
                    return s.progressed;
                }
            }
            long silentNanos = s.handling ? 0 : clock.nanoTime() - s.lastInboundNanos;
            if (silentNanos >= silenceMaxNanos) {
                s.endSilent(silentNanos);
                continue;
            }
            wake.await(silenceMaxNanos - silentNanos);
        }
    }

    /** Sleeps until {@code untilNanos}; false if the session stopped. */
    private boolean sleepUnlessStopped(long untilNanos) throws InterruptedException {
        while (true) {
            if (state() instanceof RequesterState.Stopped) {
                return false;
            }
            long left = untilNanos - clock.nanoTime();
            if (left <= 0) {
                return true;
            }
            wake.await(left);
        }
    }

    // ---------------------------------------------------------------- one stream

    /** What handling one source frame came to. */
    private sealed interface Handled {
        /** Applied (or discarded as a duplicate); {@code creditBytes} of it go into the next ACK (SES-13, SES-14). */
        record Done(boolean charged) implements Handled {}

        record Refused(Refusal refusal) implements Handled {}
    }

    private static final Handled CHARGED = new Handled.Done(true);
    private static final Handled UNCHARGED = new Handled.Done(false);

    private static Handled refused(ErrorCause cause, String detail) {
        return new Handled.Refused(new Refusal(cause, detail));
    }

    /** One gRPC stream with one random session id (SES-6). */
    private final class Stream implements StreamObserver<Inbound<SourceFrame>> {
        final UUID sessionId = UUID.randomUUID();
        final Uuid wireSession = Wire.uuid(sessionId);
        /** Volatile: set by this stream's callbacks, read by the connect loop once the stream ended. */
        volatile boolean progressed;
        /**
         * Volatile (written by gRPC's transport and callback threads, read by the connect loop's receive
         * deadline): when the stream was created, bytes of an inbound message last arrived, or a message last
         * finished applying; and whether one is being handled now.
         */
        volatile long lastInboundNanos = clock.nanoTime();
        volatile boolean handling;
        /**
         * Counts a message's bytes as they arrive, not only when it is whole: on a slow path a large frame (a
         * snapshot page, up to the encoded-frame bound) takes longer than the receive deadline to arrive, and a
         * stream that is receiving is not silent. gRPC's deframer reports body bytes to stream tracers as it
         * reads them ({@code inboundWireSize}) and a message's start as soon as its header is read; it reads
         * whole HTTP/2 DATA frames (at most 16 KiB by default), so a path is silent when one such frame takes
         * longer than the deadline (below about 5 KiB/s at the default 1 s liveness interval).
         */
        private final ClientStreamTracer.Factory inboundBytes = new ClientStreamTracer.Factory() {
            @Override
            public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                return new ClientStreamTracer() {
                    @Override
                    public void inboundMessage(int seqNo) {
                        lastInboundNanos = clock.nanoTime();
                    }

                    @Override
                    public void inboundWireSize(long bytes) {
                        lastInboundNanos = clock.nanoTime();
                    }
                };
            }
        };
        /** Guarded by {@link #lock}. */
        private StreamObserver<RequesterFrame> requests;
        /** Guarded by {@link #lock}: ACK bookkeeping (DELTA-12, SES-13). */
        private long consumedThrough;
        private long ackedThrough;
        private long pendingBytes;
        private ProtocolClock.Scheduled ackTimer;
        /** Confined to this stream's callbacks, which gRPC serializes. */
        private long lastFrame;
        private long repairRequestedAt = -1;

        void open(Optional<InstalledCursor> resume) {
            Open.Builder open = Open.newBuilder().setProtocol(ClusterIdentity.PROTOCOL)
                    .setClusterUuid(Wire.uuid(owner.cluster().uuid())).setSource(Wire.ref(source))
                    .setRequester(Wire.ref(owner.self())).setScope(scopeSpec(owner.scope()))
                    .setScopeDigest(ByteString.copyFrom(owner.scope().digest().bytes())).setSessionId(wireSession)
                    .setReceiveWindowBytes(owner.config().receiveWindowBytes());
            resume.ifPresent(c -> open.setResume(ResumePoint.newBuilder().setViewId(Wire.uuid(c.viewId()))
                    .setAppliedCursor(c.watermark())));
            StreamObserver<RequesterFrame> r = ClientCalls.asyncBidiStreamingCall(channel.newCall(method,
                    CallOptions.DEFAULT.withStreamTracerFactory(inboundBytes)), this);
            synchronized (lock) {
                requests = r;
                if (currentLocked() == this) {
                    sendLocked(RequesterFrame.newBuilder().setSessionId(wireSession).setOpen(open).build());
                    return;
                }
            }
            r.onCompleted(); // stopped before the Open went out
        }

        /** Under {@link #lock}: sends on this stream if it is still current. */
        void sendLocked(RequesterFrame f) {
            if (currentLocked() != this || requests == null) {
                return;
            }
            metrics.framesSent.inc(f.getBodyCase());
            requests.onNext(f);
        }

        private void send(RequesterFrame f) {
            synchronized (lock) {
                sendLocked(f);
            }
        }

        private boolean isCurrent() {
            synchronized (lock) {
                return currentLocked() == this;
            }
        }

        /** Applies {@code event} to the machine if this stream is current; a refusal or an ignored event comes back. */
        private RequesterState.Outcome transition(RequesterState.Event event) {
            synchronized (lock) {
                return transitionLocked(event);
            }
        }

        @Override
        public void onNext(Inbound<SourceFrame> in) {
            lastInboundNanos = clock.nanoTime();
            handling = true; // a long apply (a large commit) is not silence: later frames queue behind it
            try {
                receive(in);
            } finally {
                lastInboundNanos = clock.nanoTime(); // before clearing the flag: the loop reads the flag first
                handling = false;
            }
        }

        private void receive(Inbound<SourceFrame> in) {
            if (!isCurrent()) {
                return;
            }
            Optional<Refusal> refusal;
            try {
                refusal = switch (in) {
                    case Inbound.Oversized<SourceFrame> o -> Optional.of(new Refusal(ErrorCause.FRAME_TOO_LARGE, "source frame of "
                            + o.encodedBytes() + " bytes exceeds frameEncodedBytesMax (" + o.boundBytes() + ")"));
                    case Inbound.Unparseable<SourceFrame> u -> Optional.of(new Refusal(ErrorCause.MALFORMED_FRAME, "unparseable frame: " + u.detail()));
                    case Inbound.Parsed<SourceFrame> p -> onFrame(p.message(), p.encodedBytes(), null);
                    case Inbound.Read r -> onFrame(r.frame().header(), r.encodedBytes(), r.frame());
                };
            } catch (RuntimeException e) { // a bug (an illegal edge of the machine): reported once, the stream ends
                LOG.warn("session to {} failed handling a frame", source, e);
                refusal = Optional.of(new Refusal(ErrorCause.INTERNAL, e.toString()));
            }
            refusal.ifPresent(r -> fail(r, ResetCause.PROTOCOL_ERROR));
        }

        /** One frame; {@code read} holds a page's or delta's records when they were read without the generated parser. */
        private Optional<Refusal> onFrame(SourceFrame f, int encodedBytes, SourceFrameDecoder.Result.Read read) {
            metrics.framesReceived.inc(f.getBodyCase());
            metrics.encodedBytes.add(encodedBytes);
            if (!f.getSessionId().equals(wireSession)) {
                metrics.sessionMismatchDrops.increment();
                return Optional.empty(); // SES-6: a frame of another session never touches this one
            }
            FrameCheck c = new FrameCheck();
            long n = c.nonNegative("frame_number", f.getFrameNumber());
            if (!c.ok()) {
                return c.refusal();
            }
            if (n != lastFrame + 1) {
                return Optional.of(new Refusal(ErrorCause.FRAME_OUT_OF_ORDER, "frame " + n + " after frame " + lastFrame));
            }
            lastFrame = n;
            if (f.hasError()) {
                lastErrorCause = f.getError().getCause().name();
                if (f.getError().getCause() == ErrorCause.SESSION_LIMIT && !limitRefused) {
                    limitRefused = true; // once per episode: the retries with backoff say nothing more
                    LOG.warn("source {} refuses this requester's session with SESSION_LIMIT ({}): its coverage stays "
                            + "PartialHints until the source serves fewer sessions or raises its --source-sessions-max (BND-3); "
                            + "retrying with backoff", source, f.getError().getDetail());
                }
                LOG.debug("source {} closed the session: {} {}", source, f.getError().getCause(), f.getError().getDetail());
                end(ResetCause.DISCONNECT);
                return Optional.empty();
            }
            MembershipView view = owner.view();
            if (view == null || !view.valid()) {
                return Optional.of(new Refusal(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote frame is admitted"));
            }
            if (!view.isAdmitted(source)) {
                return Optional.of(new Refusal(ErrorCause.UNKNOWN_SOURCE_INCARNATION, "source " + source + " is not admitted"));
            }
            return switch (handle(f, n, read)) {
                case Handled.Refused r -> Optional.of(r.refusal());
                case Handled.Done d -> {
                    consumed(n, d.charged() ? encodedBytes : 0);
                    yield Optional.empty();
                }
            };
        }

        /** Applies one frame. */
        private Handled handle(SourceFrame f, long n, SourceFrameDecoder.Result.Read read) {
            if (!f.hasAccepted() && !state().accepted()) {
                return refused(ErrorCause.MALFORMED_FRAME, "first source frame must be OpenAccepted, got " + f.getBodyCase());
            }
            return switch (f.getBodyCase()) {
                case ACCEPTED -> {
                    if (limitRefused) {
                        limitRefused = false;
                        LOG.info("source {} accepts this requester's session again after SESSION_LIMIT refusals", source);
                    }
                    yield accepted(f);
                }
                case SNAPSHOT_BEGIN -> begin(f.getSnapshotBegin(), n);
                case SNAPSHOT_PAGE -> page(f.getSnapshotPage(), n, read);
                case DELTA -> delta(f, n, read);
                case SNAPSHOT_COMMIT -> commit(f.getSnapshotCommit());
                case LIVENESS -> {
                    FrameCheck c = new FrameCheck();
                    long head = c.nonNegative("liveness.source_head", f.getLiveness().getSourceHead());
                    if (!c.ok()) {
                        yield new Handled.Refused(c.refusal().orElseThrow());
                    }
                    receiver.observeLiveness(source, head);
                    yield UNCHARGED;
                }
                default -> refused(ErrorCause.MALFORMED_FRAME, "source frame without a body");
            };
        }

        private Handled accepted(SourceFrame f) {
            FrameCheck c = new FrameCheck();
            c.nonNegative("accepted.source_head", f.getAccepted().getSourceHead());
            c.nonNegative("accepted.window_bytes", f.getAccepted().getWindowBytes());
            OpenMode mode = f.getAccepted().getMode();
            if (c.ok() && mode != OpenMode.OPEN_MODE_RESUMED && mode != OpenMode.OPEN_MODE_BOOTSTRAP) {
                c.refuse(ErrorCause.UNKNOWN_ENUM_VALUE, "accepted.mode " + f.getAccepted().getModeValue());
            }
            if (!c.ok()) {
                return new Handled.Refused(c.refusal().orElseThrow());
            }
            return moved(transition(new RequesterState.Accepted(sessionId, mode == OpenMode.OPEN_MODE_RESUMED)), UNCHARGED);
        }

        private Handled moved(RequesterState.Outcome out, Handled ifMoved) {
            return out instanceof RequesterState.Outcome.Refused r ? new Handled.Refused(r.refusal()) : ifMoved;
        }

        private Handled begin(SnapshotBegin b, long n) {
            FrameCheck c = new FrameCheck();
            UUID viewId = c.uuid("snapshot_begin.view_id", b.hasViewId(), b.getViewId());
            long s0 = c.nonNegative("snapshot_begin.s0", b.getS0());
            byte[] digest = c.digest("snapshot_begin.scope_digest", b.getScopeDigest());
            if (!c.ok()) {
                return new Handled.Refused(c.refusal().orElseThrow());
            }
            if (state() instanceof RequesterState.Staging) {
                reset(ResetCause.SNAPSHOT_ABORTED); // SNAP-4: a new S0 replaces the aborted attempt
            }
            if (receiver.beginStaging(source, viewId, new ScopeDigest(digest), s0, n) instanceof StageOutcome.Rejected r) {
                return refused(Wire.cause(r.reason().wireCause()), "snapshot begin refused: " + r.reason());
            }
            RequesterState.Outcome out = transition(new RequesterState.Begun(sessionId, viewId, clock.nanoTime()));
            if (!(out instanceof RequesterState.Outcome.Moved)) {
                receiver.discardStaging(source, ResetCause.DISCONNECT); // ended meanwhile: nobody else discards it (SNAP-10)
            }
            return moved(out, CHARGED);
        }

        private Handled page(SnapshotPage p, long n, SourceFrameDecoder.Result.Read read) {
            FrameCheck c = new FrameCheck();
            UUID viewId = c.uuid("snapshot_page.view_id", p.hasViewId(), p.getViewId());
            long ordinal = c.nonNegative("snapshot_page.page_ordinal", p.getPageOrdinal());
            if (c.ok() && ordinal < 1) {
                c.refuse(ErrorCause.MALFORMED_FRAME, "snapshot_page.page_ordinal must be >= 1");
            }
            if (!c.ok()) {
                return new Handled.Refused(c.refusal().orElseThrow());
            }
            return switch (read != null ? read.page() : FrameCodec.decodeRecords(p.getNamespacesList(),
                    p.getRecordsList(), null, owner.config().frameDecodedBytesMax())) {
                case FrameCodec.Decoded.Rejected<RecordBatch> r -> refused(r.cause(), r.detail());
                case FrameCodec.Decoded.Ok<RecordBatch> ok -> {
                    if (receiver.stagePage(source, viewId, ordinal, n, ok.value()) instanceof StageOutcome.Rejected r) {
                        yield refused(Wire.cause(r.reason().wireCause()), "snapshot page refused: " + r.reason());
                    }
                    CrashPoints.reach(CrashPoints.Point.SNAPSHOT_PAGE_STAGED); // off unless -Dorbitkv.crashpoints (issue 17)
                    yield CHARGED;
                }
            };
        }

        private Handled delta(SourceFrame f, long n, SourceFrameDecoder.Result.Read read) {
            FrameCodec.DecodedDelta ci;
            switch (read != null ? read.delta() : FrameCodec.decodeDelta(f.getDelta(), owner.config().frameDecodedBytesMax())) {
                case FrameCodec.Decoded.Rejected<FrameCodec.DecodedDelta> r -> {
                    return refused(r.cause(), r.detail());
                }
                case FrameCodec.Decoded.Ok<FrameCodec.DecodedDelta> ok -> ci = ok.value();
            }
            metrics.decodedBytes.add(FrameCodec.decodedBytes(ci.records()));
            Optional<UUID> target = state().deltaTarget();
            if (target.isEmpty()) {
                return refused(ErrorCause.MALFORMED_FRAME, "a delta before any snapshot begin or resumed view");
            }
            UUID view = target.get();
            return switch (receiver.applyDelta(source, view, n, ci.interval(), ci.records())) {
                case DeltaOutcome.Applied a -> {
                    repairRequestedAt = -1;
                    progressed = true;
                    CrashPoints.reach(CrashPoints.Point.DELTA_APPLIED); // off unless -Dorbitkv.crashpoints (issue 17)
                    yield CHARGED;
                }
                case DeltaOutcome.Duplicate d -> CHARGED; // DELTA-7: discarded
                case DeltaOutcome.ResumeFrom r -> {
                    requestRegeneration(view, r.appliedCursor(), true);
                    yield CHARGED;
                }
                case DeltaOutcome.NeedRepair r -> {
                    requestRegeneration(view, r.appliedCursor(), false);
                    yield CHARGED;
                }
                case DeltaOutcome.Rejected r -> refused(Wire.cause(r.reason().wireCause()), "delta refused: " + r.reason());
            };
        }

        /** DELTA-8/DELTA-9: one request per applied cursor; in-flight stale frames do not repeat it. */
        private void requestRegeneration(UUID view, long applied, boolean overlap) {
            if (repairRequestedAt == applied) {
                return;
            }
            repairRequestedAt = applied;
            RequesterFrame.Builder b = RequesterFrame.newBuilder().setSessionId(wireSession);
            if (overlap) {
                b.setResumeFrom(ResumeFrom.newBuilder().setViewId(Wire.uuid(view)).setAppliedCursor(applied));
            } else {
                b.setNeedRepair(NeedRepair.newBuilder().setViewId(Wire.uuid(view)).setAppliedCursor(applied));
            }
            send(b.build());
        }

        private Handled commit(SnapshotCommit c) {
            FrameCheck check = new FrameCheck();
            UUID viewId = check.uuid("snapshot_commit.view_id", c.hasViewId(), c.getViewId());
            long s1 = check.nonNegative("snapshot_commit.s1", c.getS1());
            long pages = check.nonNegative("snapshot_commit.page_count", c.getPageCount());
            long first = check.nonNegative("snapshot_commit.first_frame", c.getFirstFrame());
            long last = check.nonNegative("snapshot_commit.last_frame", c.getLastFrame());
            long maxScanned = check.nonNegative("snapshot_commit.max_scanned_sequence", c.getMaxScannedSequence());
            byte[] digest = check.transcriptDigest("snapshot_commit.transcript_digest", c.getTranscriptDigest());
            if (!check.ok()) {
                return new Handled.Refused(check.refusal().orElseThrow());
            }
            CommitMarker marker;
            try { // the contract record validates its relations; its refusal becomes this frame's
                marker = new CommitMarker(s1, pages, first, last, maxScanned, new TranscriptDigest(digest));
            } catch (IllegalArgumentException e) {
                return refused(ErrorCause.MALFORMED_FRAME, "snapshot_commit: " + e.getMessage());
            }
            long begun = state() instanceof RequesterState.Staging s ? s.begunNanos() : clock.nanoTime();
            return switch (receiver.commit(source, viewId, marker)) {
                case CommitOutcome.Installed i -> {
                    installs.incrementAndGet();
                    progressed = true;
                    metrics.bootstrapSeconds.observeNanos(clock.nanoTime() - begun);
                    yield moved(transition(new RequesterState.Installed(sessionId, i.viewId())), CHARGED);
                }
                case CommitOutcome.Rejected r -> {
                    transition(new RequesterState.CommitRejected(sessionId)); // the receiver discarded the attempt
                    metrics.resets.inc(ResetCause.COMMIT_REJECTED);
                    yield refused(Wire.cause(r.reason().wireCause()), "commit refused: " + r.reason());
                }
            };
        }

        // ------------------------------------------------------------ ACK cadence (DELTA-12, SES-13, SES-14)

        private void consumed(long frame, int dataBytes) {
            synchronized (lock) {
                if (currentLocked() != this) {
                    return;
                }
                consumedThrough = frame;
                if (dataBytes == 0 && pendingBytes == 0) {
                    return; // no credit outstanding: idle sessions send no empty ACK loops
                }
                pendingBytes += dataBytes;
                if (pendingBytes >= owner.config().receiveWindowBytes() / 2) {
                    ackLocked();
                } else if (ackTimer == null) {
                    try {
                        ackTimer = clock.schedule(this::ackFromTimer, TimeUnit.MILLISECONDS.toNanos(owner.config().ackIntervalMs()));
                    } catch (RejectedExecutionException e) { // the subscriber is closing: acknowledge at once instead
                        ackLocked();
                    }
                }
            }
        }

        private void ackFromTimer() {
            synchronized (lock) {
                ackTimer = null;
                if (consumedThrough > ackedThrough) {
                    ackLocked();
                }
            }
        }

        /** Under {@link #lock}: the view id comes from the same state the frame handlers moved, so it is never torn. */
        private void ackLocked() {
            if (currentLocked() != this) {
                return;
            }
            long applied = receiver.installedCursor(source).map(InstalledCursor::watermark).orElse(0L);
            Ack.Builder ack = Ack.newBuilder().setConsumedThroughFrame(consumedThrough).setAppliedCursor(applied);
            state.deltaTarget().ifPresent(view -> ack.setViewId(Wire.uuid(view)));
            ackedThrough = consumedThrough;
            pendingBytes = 0;
            sendLocked(RequesterFrame.newBuilder().setSessionId(wireSession).setAck(ack).build());
        }

        // ------------------------------------------------------------ ending

        /** SNAP-10: the staging attempt of this stream is discarded and counted by cause. */
        private void reset(ResetCause cause) {
            metrics.resets.inc(cause);
            receiver.discardStaging(source, cause);
        }

        /** Sends {@code Error(cause)} and ends the stream; staging is discarded (SNAP-10). */
        void fail(Refusal r, ResetCause reset) {
            RequesterState left;
            synchronized (lock) {
                if (currentLocked() != this) {
                    return;
                }
                left = state;
                closeLocked(Optional.of(r));
                transitionLocked(new RequesterState.Ended(sessionId));
            }
            LOG.debug("session to {} failed: {} {}", source, r.cause(), r.detail());
            ended(left, reset);
        }

        /**
         * No source frame for {@code silentNanos}: cancels the call (nothing can be said on a dead path, and a
         * cancel frees the source's session if the path still works), drops the channel's connection so the
         * next stream opens a new one, and ends the stream; the loop then reconnects and resumes (SNAP-8).
         */
        void endSilent(long silentNanos) {
            RequesterState left;
            synchronized (lock) {
                if (currentLocked() != this) {
                    return;
                }
                left = state;
                if (ackTimer != null) {
                    ackTimer.cancel();
                    ackTimer = null;
                }
                lastErrorCause = RECEIVE_SILENCE_CAUSE;
                if (requests instanceof ClientCallStreamObserver<RequesterFrame> call) {
                    call.cancel("no source frame for " + TimeUnit.NANOSECONDS.toMillis(silentNanos) + " ms", null);
                }
                transitionLocked(new RequesterState.Ended(sessionId));
            }
            LOG.info("session to {} silent for {} ms ({} liveness intervals of {} ms): replacing its stream and connection",
                    source, TimeUnit.NANOSECONDS.toMillis(silentNanos), SILENT_LIVENESS_INTERVALS_MAX,
                    owner.config().livenessIntervalMs());
            channel.enterIdle();
            ended(left, ResetCause.DISCONNECT);
        }

        /** The stream ended without an error of ours (the source's Error, its half-close, the transport). */
        private void end(ResetCause reset) {
            RequesterState left;
            synchronized (lock) {
                if (currentLocked() != this) {
                    return;
                }
                left = state;
                closeLocked(Optional.empty());
                transitionLocked(new RequesterState.Ended(sessionId));
            }
            ended(left, reset);
        }

        /** Under {@link #lock}: sends the Error (if any), half-closes, stops the ACK timer. */
        void closeLocked(Optional<Refusal> error) {
            if (ackTimer != null) {
                ackTimer.cancel();
                ackTimer = null;
            }
            error.ifPresent(r -> {
                lastErrorCause = r.cause().name();
                metrics.rejections.inc(r.cause());
            });
            if (requests == null) {
                return; // the Open never went out
            }
            try {
                if (error.isPresent()) {
                    Refusal r = error.get();
                    requests.onNext(RequesterFrame.newBuilder().setSessionId(wireSession).setError(Wire.error(r.cause(), r.detail())).build());
                    metrics.framesSent.inc(RequesterFrame.BodyCase.ERROR);
                }
                requests.onCompleted();
            } catch (RuntimeException e) { // the call already ended: the source learns it from the transport
                LOG.trace("error frame not delivered", e);
            }
        }

        private void ended(RequesterState left, ResetCause reset) {
            if (left instanceof RequesterState.Staging) {
                reset(reset);
            }
            wake.raise();
        }

        @Override
        public void onError(Throwable t) {
            Status.Code code = Status.fromThrowable(t).getCode();
            if (isCurrent()) {
                lastErrorCause = "TRANSPORT_" + code.name();
                if (code == Status.Code.UNAVAILABLE) {
                    // This loop's backoff (reconnectBackoffMinMs..MaxMs) paces reconnects; without this, the
                    // channel's own hidden backoff after failed connection attempts (1 s growing to 120 s) would
                    // fail every new stream at once for up to two minutes after the path healed.
                    channel.resetConnectBackoff();
                }
            }
            end(ResetCause.DISCONNECT);
        }

        @Override
        public void onCompleted() {
            end(ResetCause.DISCONNECT);
        }
    }

    static ScopeSpec scopeSpec(Scope scope) {
        if (scope instanceof Scope.NamespaceList list) {
            NamespaceList.Builder b = NamespaceList.newBuilder();
            list.namespaces().forEach(ns -> b.addNamespaces(ByteString.copyFrom(ns.bytes())));
            return ScopeSpec.newBuilder().setList(b).build();
        }
        return ScopeSpec.newBuilder().setAll(AllNamespaces.getDefaultInstance()).build();
    }
}
