package orbitkv.inventory.session;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.ViewReceiver;
import orbitkv.inventory.codec.FrameCodec;
import orbitkv.inventory.codec.SourceFrameDecoder;
import orbitkv.inventory.session.Wire.Refused;
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
import orbitkv.inventory.Scope;
import orbitkv.membership.CrashPoints;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.RetryBackoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requester end of one directed session to one source incarnation (SES-2..SES-14, DELTA-7..DELTA-12,
 * SNAP-6..SNAP-10). A virtual thread runs the connect loop: open a stream with a fresh random session id,
 * resume only from the receiver's installed cursor (SNAP-8), and on any end back off exponentially with
 * jitter before reconnecting. Frames are handled on the gRPC thread in order, validated and decoded before
 * the receiver is called (DELTA-4), and acknowledged after application (DELTA-12).
 */
final class RequesterSession {
    private static final Logger LOG = LoggerFactory.getLogger(RequesterSession.class);

    private final Subscriber owner;
    private final Incarnation source;
    private final ManagedChannel channel;
    private final MethodDescriptor<RequesterFrame, Inbound<SourceFrame>> method;
    private final AtomicLong connects = new AtomicLong();
    private final AtomicLong installs = new AtomicLong();
    private volatile SubscriptionStatus.State state = SubscriptionStatus.State.CONNECTING;
    private volatile String lastErrorCause = "";
    private volatile boolean stopped;
    private volatile Stream current;
    private Thread runner;

    RequesterSession(Subscriber owner, Incarnation source, ManagedChannel channel) {
        this.owner = owner;
        this.source = source;
        this.channel = channel;
        this.method = InventorySessionGrpc.getSessionMethod().toBuilder(ProtoUtils.marshaller(RequesterFrame.getDefaultInstance()),
                Inbound.sourceFrames(owner.config().frameEncodedBytesMax(), owner.config().frameDecodedBytesMax())).build();
    }

    Incarnation source() {
        return source;
    }

    void start() {
        runner = Thread.ofVirtual().name("inventory-session-requester-" + source.nodeId()).start(this::run);
    }

    SubscriptionStatus.PeerSession status() {
        return new SubscriptionStatus.PeerSession(source, stopped ? SubscriptionStatus.State.CLOSED : state,
                connects.get(), installs.get(), lastErrorCause);
    }

    boolean flushThrough(long target) {
        Stream s = current;
        return s != null && s.flushThrough(target);
    }

    /** Stops for good: closes the stream with {@code cause}, discards staging and shuts the channel down. */
    void stop(ErrorCause cause, ResetCause reset) {
        stopped = true;
        Stream s = current;
        if (s != null) {
            s.fail(cause, "requester stopped the session", reset);
        }
        if (runner != null) {
            runner.interrupt();
        }
        owner.receiver().discardStaging(source, reset);
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
                if (!channel.awaitTermination(CHANNEL_DRAIN_MS, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    channel.shutdownNow();
                }
            } catch (InterruptedException e) {
                channel.shutdownNow();
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Bound on the graceful close of a stopped session's channel. */
    static final long CHANNEL_DRAIN_MS = 1_000;

    private void run() {
        RetryBackoff.Sequence backoff = owner.config().reconnectBackoff().sequence();
        while (!stopped) {
            boolean progressed = false;
            if (owner.admits(source)) {
                Stream s = new Stream();
                current = s;
                connects.incrementAndGet();
                s.open();
                try {
                    s.done.get();
                } catch (InterruptedException e) {
                    break;
                } catch (ExecutionException e) {
                    LOG.trace("stream ended", e);
                }
                progressed = s.progressed;
                current = null;
            }
            if (stopped) {
                break;
            }
            if (progressed) {
                backoff.reset();
            }
            state = SubscriptionStatus.State.BACKING_OFF;
            try {
                Thread.sleep(backoff.nextDelayMs());
            } catch (InterruptedException e) {
                break;
            }
        }
    }

    /** One gRPC stream with one random session id (SES-6). */
    private final class Stream implements StreamObserver<Inbound<SourceFrame>> {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        private final UUID sessionId = UUID.randomUUID();
        private final Uuid wireSession = Wire.uuid(sessionId);
        private final Object sendLock = new Object();
        private final ViewReceiver receiver = owner.receiver();
        private StreamObserver<RequesterFrame> requests;
        private volatile boolean ended;
        volatile boolean progressed;
        private boolean accepted;
        private long lastFrame;
        private UUID staging;
        private long stagingStartNanos;
        private UUID installedView;
        private long repairRequestedAt = -1;
        private Optional<InstalledCursor> resume = Optional.empty();
        // ACK state, guarded by sendLock
        private long consumedThrough;
        private long ackedThrough;
        private long pendingBytes;
        private ScheduledFuture<?> ackTimer;

        void open() {
            state = SubscriptionStatus.State.CONNECTING;
            resume = receiver.installedCursor(source);
            Open.Builder open = Open.newBuilder().setProtocol(orbitkv.membership.ClusterIdentity.PROTOCOL)
                    .setClusterUuid(Wire.uuid(owner.cluster().uuid())).setSource(Wire.ref(source))
                    .setRequester(Wire.ref(owner.self())).setScope(scopeSpec(owner.scope()))
                    .setScopeDigest(ByteString.copyFrom(owner.scope().digest().bytes())).setSessionId(wireSession)
                    .setReceiveWindowBytes(owner.config().receiveWindowBytes());
            resume.ifPresent(c -> open.setResume(ResumePoint.newBuilder().setViewId(Wire.uuid(c.viewId()))
                    .setAppliedCursor(c.watermark())));
            requests = ClientCalls.asyncBidiStreamingCall(channel.newCall(method, CallOptions.DEFAULT), this);
            send(RequesterFrame.newBuilder().setSessionId(wireSession).setOpen(open).build());
        }

        private void send(RequesterFrame f) {
            synchronized (sendLock) {
                if (ended) {
                    return;
                }
                owner.sessionMetrics().frames.labelValues("requester", "sent", f.getBodyCase().name()).inc();
                requests.onNext(f);
            }
        }

        boolean flushThrough(long target) {
            if (ended || !accepted) {
                return false;
            }
            send(RequesterFrame.newBuilder().setSessionId(wireSession)
                    .setFlushThrough(FlushThrough.newBuilder().setTargetSequence(target)).build());
            return true;
        }

        @Override
        public void onNext(Inbound<SourceFrame> in) {
            if (ended) {
                return;
            }
            switch (in) {
                case Inbound.Oversized<SourceFrame> o -> fail(ErrorCause.FRAME_TOO_LARGE, "source frame of "
                        + o.encodedBytes() + " bytes exceeds frameEncodedBytesMax (" + o.boundBytes() + ")", ResetCause.PROTOCOL_ERROR);
                case Inbound.Unparseable<SourceFrame> u -> fail(ErrorCause.MALFORMED_FRAME, "unparseable frame: " + u.detail(),
                        ResetCause.PROTOCOL_ERROR);
                case Inbound.Parsed<SourceFrame> p -> onFrame(p.message(), p.encodedBytes(), null);
                case Inbound.Read r -> onFrame(r.frame().header(), r.encodedBytes(), r.frame());
            }
        }

        /** One frame; {@code read} holds a page's or delta's records when they were read without the generated parser. */
        private void onFrame(SourceFrame f, int encodedBytes, SourceFrameDecoder.Result.Read read) {
            owner.sessionMetrics().frames.labelValues("requester", "received", f.getBodyCase().name()).inc();
            owner.sessionMetrics().bytes.labelValues("requester", "encoded").inc(encodedBytes);
            if (!f.getSessionId().equals(wireSession)) {
                owner.sessionMetrics().sessionMismatchDrops.labelValues("requester").inc();
                return; // SES-6: a frame of another session never touches this one
            }
            try {
                long n = Wire.nonNegative("frame_number", f.getFrameNumber());
                if (n != lastFrame + 1) {
                    throw new Refused(ErrorCause.FRAME_OUT_OF_ORDER, "frame " + n + " after frame " + lastFrame);
                }
                lastFrame = n;
                if (f.hasError()) {
                    lastErrorCause = f.getError().getCause().name();
                    LOG.debug("source {} closed the session: {} {}", source, f.getError().getCause(), f.getError().getDetail());
                    end(ResetCause.DISCONNECT);
                    return;
                }
                MembershipView view = owner.view();
                if (view == null || !view.valid()) {
                    throw new Refused(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote frame is admitted");
                }
                if (!view.isAdmitted(source)) {
                    throw new Refused(ErrorCause.UNKNOWN_SOURCE_INCARNATION, "source " + source + " is not admitted");
                }
                boolean data = handle(f, n, read);
                consumed(n, data ? encodedBytes : 0);
            } catch (Refused r) {
                fail(r.cause, r.getMessage(), ResetCause.PROTOCOL_ERROR);
            }
        }

        /** Applies one frame; true iff it consumed credit. */
        private boolean handle(SourceFrame f, long n, SourceFrameDecoder.Result.Read read) throws Refused {
            if (!accepted && !f.hasAccepted()) {
                throw new Refused(ErrorCause.MALFORMED_FRAME, "first source frame must be OpenAccepted, got " + f.getBodyCase());
            }
            switch (f.getBodyCase()) {
                case ACCEPTED -> {
                    if (accepted) {
                        throw new Refused(ErrorCause.MALFORMED_FRAME, "a second OpenAccepted");
                    }
                    Wire.nonNegative("accepted.source_head", f.getAccepted().getSourceHead());
                    Wire.nonNegative("accepted.window_bytes", f.getAccepted().getWindowBytes());
                    OpenMode mode = f.getAccepted().getMode();
                    if (mode == OpenMode.OPEN_MODE_RESUMED) {
                        if (resume.isEmpty()) {
                            throw new Refused(ErrorCause.MALFORMED_FRAME, "resumed without a resume point");
                        }
                        installedView = resume.get().viewId();
                        state = SubscriptionStatus.State.STREAMING;
                    } else if (mode == OpenMode.OPEN_MODE_BOOTSTRAP) {
                        state = SubscriptionStatus.State.BOOTSTRAPPING;
                    } else {
                        throw new Refused(ErrorCause.UNKNOWN_ENUM_VALUE, "accepted.mode " + f.getAccepted().getModeValue());
                    }
                    accepted = true;
                    return false;
                }
                case SNAPSHOT_BEGIN -> {
                    begin(f.getSnapshotBegin(), n);
                    return true;
                }
                case SNAPSHOT_PAGE -> {
                    page(f.getSnapshotPage(), n, read);
                    return true;
                }
                case DELTA -> {
                    delta(f, n, read);
                    return true;
                }
                case SNAPSHOT_COMMIT -> {
                    commit(f.getSnapshotCommit());
                    return true;
                }
                case LIVENESS -> {
                    receiver.observeLiveness(source, Wire.nonNegative("liveness.source_head", f.getLiveness().getSourceHead()));
                    return false;
                }
                default -> throw new Refused(ErrorCause.MALFORMED_FRAME, "source frame without a body");
            }
        }

        private void begin(SnapshotBegin b, long n) throws Refused {
            UUID viewId = Wire.requiredUuid("snapshot_begin.view_id", b.hasViewId(), b.getViewId());
            long s0 = Wire.nonNegative("snapshot_begin.s0", b.getS0());
            ScopeDigest digest = new ScopeDigest(Wire.digest("snapshot_begin.scope_digest", b.getScopeDigest()));
            if (staging != null) {
                reset(ResetCause.SNAPSHOT_ABORTED); // SNAP-4: a new S0 replaces the aborted attempt
            }
            if (receiver.beginStaging(source, viewId, digest, s0, n) instanceof StageOutcome.Rejected r) {
                throw new Refused(Wire.cause(r.reason().wireCause()), "snapshot begin refused: " + r.reason());
            }
            staging = viewId;
            stagingStartNanos = System.nanoTime();
            state = SubscriptionStatus.State.BOOTSTRAPPING;
        }

        private void page(SnapshotPage p, long n, SourceFrameDecoder.Result.Read read) throws Refused {
            UUID viewId = Wire.requiredUuid("snapshot_page.view_id", p.hasViewId(), p.getViewId());
            long ordinal = Wire.nonNegative("snapshot_page.page_ordinal", p.getPageOrdinal());
            if (ordinal < 1) {
                throw new Refused(ErrorCause.MALFORMED_FRAME, "snapshot_page.page_ordinal must be >= 1");
            }
            RecordBatch records = decoded(read != null ? read.page() : FrameCodec.decodeRecords(p.getNamespacesList(),
                    p.getRecordsList(), null, owner.config().frameDecodedBytesMax()));
            if (receiver.stagePage(source, viewId, ordinal, n, records) instanceof StageOutcome.Rejected r) {
                throw new Refused(Wire.cause(r.reason().wireCause()), "snapshot page refused: " + r.reason());
            }
            CrashPoints.reach(CrashPoints.Point.SNAPSHOT_PAGE_STAGED); // off unless -Dorbitkv.crashpoints (issue 17)
        }

        private void delta(SourceFrame f, long n, SourceFrameDecoder.Result.Read read) throws Refused {
            FrameCodec.DecodedDelta ci = decoded(read != null ? read.delta()
                    : FrameCodec.decodeDelta(f.getDelta(), owner.config().frameDecodedBytesMax()));
            owner.sessionMetrics().bytes.labelValues("requester", "decoded").inc(FrameCodec.decodedBytes(ci.records()));
            UUID view = staging != null ? staging : installedView;
            if (view == null) {
                throw new Refused(ErrorCause.MALFORMED_FRAME, "a delta before any snapshot begin or resumed view");
            }
            switch (receiver.applyDelta(source, view, n, ci.interval(), ci.records())) {
                case DeltaOutcome.Applied a -> {
                    repairRequestedAt = -1;
                    progressed = true;
                    CrashPoints.reach(CrashPoints.Point.DELTA_APPLIED); // off unless -Dorbitkv.crashpoints (issue 17)
                }
                case DeltaOutcome.Duplicate d -> {
                    // DELTA-7: discarded
                }
                case DeltaOutcome.ResumeFrom r -> requestRegeneration(view, r.appliedCursor(), true);
                case DeltaOutcome.NeedRepair r -> requestRegeneration(view, r.appliedCursor(), false);
                case DeltaOutcome.Rejected r -> throw new Refused(Wire.cause(r.reason().wireCause()), "delta refused: " + r.reason());
            }
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

        private void commit(SnapshotCommit c) throws Refused {
            UUID viewId = Wire.requiredUuid("snapshot_commit.view_id", c.hasViewId(), c.getViewId());
            CommitMarker marker;
            try {
                marker = new CommitMarker(Wire.nonNegative("snapshot_commit.s1", c.getS1()),
                        Wire.nonNegative("snapshot_commit.page_count", c.getPageCount()),
                        Wire.nonNegative("snapshot_commit.first_frame", c.getFirstFrame()),
                        Wire.nonNegative("snapshot_commit.last_frame", c.getLastFrame()),
                        Wire.nonNegative("snapshot_commit.max_scanned_sequence", c.getMaxScannedSequence()),
                        new TranscriptDigest(Wire.transcriptDigest("snapshot_commit.transcript_digest", c.getTranscriptDigest())));
            } catch (IllegalArgumentException e) {
                throw new Refused(ErrorCause.MALFORMED_FRAME, "snapshot_commit: " + e.getMessage());
            }
            switch (receiver.commit(source, viewId, marker)) {
                case CommitOutcome.Installed i -> {
                    installedView = i.viewId();
                    staging = null;
                    installs.incrementAndGet();
                    progressed = true;
                    owner.sessionMetrics().bootstrapSeconds.observe((System.nanoTime() - stagingStartNanos) / 1e9);
                    state = SubscriptionStatus.State.STREAMING;
                }
                case CommitOutcome.Rejected r -> {
                    staging = null; // the receiver discarded the attempt
                    owner.sessionMetrics().resets.labelValues(ResetCause.COMMIT_REJECTED.name()).inc();
                    throw new Refused(Wire.cause(r.reason().wireCause()), "commit refused: " + r.reason());
                }
            }
        }

        private <T> T decoded(FrameCodec.Decoded<T> d) throws Refused {
            return switch (d) {
                case FrameCodec.Decoded.Ok<T> ok -> ok.value();
                case FrameCodec.Decoded.Rejected<T> r -> throw new Refused(r.cause(), r.detail());
            };
        }

        // ------------------------------------------------------------ ACK cadence (DELTA-12, SES-13, SES-14)

        private void consumed(long frame, int dataBytes) {
            synchronized (sendLock) {
                consumedThrough = frame;
                if (dataBytes == 0 && pendingBytes == 0) {
                    return; // no credit outstanding: idle sessions send no empty ACK loops
                }
                pendingBytes += dataBytes;
                if (pendingBytes >= owner.config().receiveWindowBytes() / 2) {
                    ackNow();
                } else if (ackTimer == null) {
                    try {
                        ackTimer = owner.timer().schedule(this::ackFromTimer, owner.config().ackIntervalMs(), TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.RejectedExecutionException e) {
                        ackNow(); // the subscriber is closing: acknowledge at once instead
                    }
                }
            }
        }

        private void ackFromTimer() {
            synchronized (sendLock) {
                ackTimer = null;
                if (consumedThrough > ackedThrough) {
                    ackNow();
                }
            }
        }

        private void ackNow() {
            if (ended) {
                return;
            }
            long applied = receiver.installedCursor(source).map(InstalledCursor::watermark).orElse(0L);
            UUID view = staging != null ? staging : installedView;
            Ack.Builder ack = Ack.newBuilder().setConsumedThroughFrame(consumedThrough).setAppliedCursor(applied);
            if (view != null) {
                ack.setViewId(Wire.uuid(view));
            }
            ackedThrough = consumedThrough;
            pendingBytes = 0;
            owner.sessionMetrics().frames.labelValues("requester", "sent", "ACK").inc();
            requests.onNext(RequesterFrame.newBuilder().setSessionId(wireSession).setAck(ack).build());
        }

        // ------------------------------------------------------------ ending

        private void reset(ResetCause cause) {
            owner.sessionMetrics().resets.labelValues(cause.name()).inc();
            receiver.discardStaging(source, cause);
            staging = null;
        }

        /** Sends {@code Error(cause)} and cancels the stream; staging is discarded (SNAP-10). */
        void fail(ErrorCause cause, String detail, ResetCause reset) {
            synchronized (sendLock) {
                if (ended) {
                    return;
                }
                lastErrorCause = cause.name();
                owner.sessionMetrics().rejections.labelValues("requester", cause.name()).inc();
                try {
                    requests.onNext(RequesterFrame.newBuilder().setSessionId(wireSession).setError(Wire.error(cause, detail)).build());
                    requests.onCompleted();
                } catch (RuntimeException e) {
                    LOG.trace("error frame not delivered", e);
                }
            }
            LOG.debug("session to {} failed: {} {}", source, cause, detail);
            end(reset);
        }

        private void end(ResetCause reset) {
            synchronized (sendLock) {
                if (ended && done.isDone()) {
                    return;
                }
                ended = true;
                if (ackTimer != null) {
                    ackTimer.cancel(false);
                }
            }
            if (staging != null) {
                reset(reset);
            }
            done.complete(null);
        }

        @Override
        public void onError(Throwable t) {
            if (!ended) {
                lastErrorCause = "TRANSPORT_" + Status.fromThrowable(t).getCode().name();
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
