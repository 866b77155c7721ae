package orbitkv.inventory.session;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.JournalStatus;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.codec.EncodedFrame;
import orbitkv.inventory.codec.SourceFrameEncoder;
import orbitkv.inventory.codec.UnnumberedFrame;
import orbitkv.inventory.session.SourceState.Position;
import orbitkv.inventory.source.AwaitOutcome;
import orbitkv.inventory.source.CoalescingWindow;
import orbitkv.inventory.source.SourceInventory;
import orbitkv.inventory.wire.Ack;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.Liveness;
import orbitkv.inventory.wire.OpenAccepted;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SnapshotBegin;
import orbitkv.inventory.wire.SnapshotCommit;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.CrashPoints;
import orbitkv.membership.Incarnation;
import orbitkv.membership.ProtocolClock;
import orbitkv.membership.RetryBackoff;
import orbitkv.membership.MembershipView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source end of one directed session (SES-2..SES-14, DELTA-1..DELTA-14, SNAP-1..SNAP-5), driven by the
 * {@link SourceState} machine.
 *
 * <p>Inbound frames (ACK, FlushThrough, ResumeFrom, NeedRepair, Error) are handled on the gRPC thread and
 * never wait behind encoding (SES-3): an ACK returns credit, a flush or regeneration request lands in a
 * single-slot mailbox (latest wins, so bounded). Each raises the session's one {@link WakeSignal}, which a
 * journal append also raises while the pump is idle (DELTA-14). The pump, one virtual thread, encodes
 * snapshot pages, replay and deltas outside the inventory lock (BND-1), waits for credit before each data
 * frame (SES-13) and sends idle liveness (DELTA-13); it waits only on that signal.
 *
 * <p>Threads: the gRPC inbound thread, the pump, and any thread that closes the session (the server on
 * membership, fencing, replacement or shutdown). One lock, {@link #lock}, guards the machine's state, the
 * mailbox, frame numbering and the last send time; sends happen under it, so a frame, its number and the
 * state change it causes are one step. Expected endings are values ({@link Step.Stop}), never exceptions.
 */
final class SourceSession implements StreamObserver<Inbound<RequesterFrame>> {
    private static final Logger LOG = LoggerFactory.getLogger(SourceSession.class);

    private final SessionServer server;
    private final ServerCallStreamObserver<EncodedFrame> out;
    private final SessionConfig config;
    private final SourceInventory source;
    private final SourceCounters metrics;
    /** The session's time and timers (issue 25): the server's clock, never the host clock read directly. */
    private final ProtocolClock clock;
    private final WakeSignal wake;
    /** The pump's wake-up as armed on the journal's broadcast signal; one instance, so re-arming keeps one slot. */
    private final Runnable appendWake;
    private final AtomicLong mismatchDrops = new AtomicLong();

    private final Object lock = new Object();
    /** Guarded by {@link #lock}. */
    private SourceState state = new SourceState.Opening();
    /** Guarded by {@link #lock}: the highest FlushThrough target not yet handed to the window (PUB-4). */
    private long flushTarget;
    /** Guarded by {@link #lock}: the latest regeneration request (one slot, latest wins: bounded). */
    private InstalledCursor regenerate;
    /** Guarded by {@link #lock}: the next frame number (SES-12). */
    private long nextFrame = 1;
    /** Guarded by {@link #lock}: when the last frame went to the transport (liveness, DELTA-13). */
    private long lastSendNanos;

    /**
     * Set once on the gRPC thread while the Open is handled, before the pump starts; volatile because
     * status readers and closing threads read them without the lock.
     */
    private volatile OpenCheck.Accepted open;
    private volatile Uuid wireSessionId;
    private volatile CreditLedger ledger;
    /** Written by the pump only; volatile for the status reader (DIAG-1). */
    private volatile long snapshotAttempts;
    private volatile long snapshotAborts;

    /** Pump thread only: the coalescing window of the current position, and the snapshot retry delay (SNAP-4). */
    private CoalescingWindow window;
    /** SNAP-4: the retry delays of trimmed snapshot attempts; reset once an attempt commits or a stream rebootstraps. */
    private final RetryBackoff.Sequence snapshotBackoff;

    /** The node id the caller's certificate names (peer mutual TLS), empty without TLS (issue 33). */
    private final Optional<orbitkv.membership.NodeId> peerNodeId;

    SourceSession(SessionServer server, ServerCallStreamObserver<EncodedFrame> out) {
        this.server = server;
        this.out = out;
        this.config = server.config();
        this.snapshotBackoff = config.snapshotRetryBackoff().sequence();
        this.source = server.source();
        this.metrics = server.counters();
        this.clock = server.clock();
        this.wake = new WakeSignal(clock);
        this.appendWake = wake::raise;
        out.setOnCancelHandler(() -> closeQuietly("cancelled by the requester's transport"));
        this.peerNodeId = orbitkv.inventory.PeerIdentity.current(); // the call's context: created in startCall
    }

    Incarnation requester() {
        OpenCheck.Accepted a = open;
        return a == null ? null : a.requester();
    }

    SourceSessionStatus status() {
        SourceState s = state();
        CreditLedger l = ledger;
        OpenCheck.Accepted a = open;
        return new SourceSessionStatus(a == null ? null : a.requester(), a == null ? null : a.sessionId(),
                s.phase(), s.position().map(Position::cursor).orElse(0L), l == null ? 0 : l.lastSentFrame(),
                l == null ? 0 : l.outstandingBytes(), l == null ? 0 : l.peakOutstandingBytes(),
                l == null ? 0 : l.returnedBytes(), l == null ? 0 : l.duplicateAcks(), mismatchDrops.get(),
                snapshotAttempts, snapshotAborts);
    }

    private SourceState state() {
        synchronized (lock) {
            return state;
        }
    }

    /** Under {@link #lock}: the one place the state changes; a new position or a new bootstrap empties the mailbox. */
    private void apply(SourceState.Event event) {
        state = SourceState.next(state, event);
        if (event instanceof SourceState.Committed || event instanceof SourceState.Rebootstrap) {
            regenerate = null; // requests named the old position (SNAP-8: a new view is resumed only once committed)
        }
    }

    // ---------------------------------------------------------------- inbound (gRPC thread)

    @Override
    public void onNext(Inbound<RequesterFrame> in) {
        if (state() instanceof SourceState.Closed) {
            return;
        }
        switch (in) {
            case Inbound.Oversized<RequesterFrame> o -> fail(open == null ? ErrorCause.OPEN_TOO_LARGE : ErrorCause.FRAME_TOO_LARGE,
                    "requester frame of " + o.encodedBytes() + " bytes exceeds openEncodedBytesMax (" + o.boundBytes() + ")");
            case Inbound.Unparseable<RequesterFrame> u -> fail(ErrorCause.MALFORMED_FRAME, "unparseable frame: " + u.detail());
            case Inbound.Parsed<RequesterFrame> p -> {
                metrics.framesReceived.inc(p.message().getBodyCase());
                metrics.encodedBytes.add(p.encodedBytes());
                if (open == null) {
                    onOpen(p.message());
                } else {
                    onFrame(p.message()).ifPresent(this::fail);
                }
            }
        }
    }

    private void onOpen(RequesterFrame frame) {
        ErrorCause stopped = server.stoppedCause();
        if (stopped != null) { // before any check: a closing source's lease may already be gone (G12)
            wireSessionId = frame.hasSessionId() ? frame.getSessionId() : Uuid.getDefaultInstance();
            fail(stopped, stoppedDetail(stopped));
            return;
        }
        switch (OpenCheck.check(frame, server.cluster(), server.self(), server.membership(), config, peerNodeId)) {
            case OpenCheck.Refused r -> {
                wireSessionId = frame.hasSessionId() ? frame.getSessionId() : Uuid.getDefaultInstance();
                fail(r.refusal());
            }
            case OpenCheck.Accepted a -> accept(a);
        }
    }

    private void accept(OpenCheck.Accepted a) {
        wireSessionId = Wire.uuid(a.sessionId());
        ledger = new CreditLedger(a.windowBytes(), config.windowFramesMax(), clock);
        open = a;
        ErrorCause refusal = server.admit(this);
        if (refusal != null) {
            fail(refusal, refusal == ErrorCause.SESSION_LIMIT
                    ? "source serves sessionsPerSourceMax (" + config.sessionsPerSourceMax() + ") sessions" : stoppedDetail(refusal));
            return;
        }
        Optional<Position> resumed = resumable(a.resume());
        JournalStatus js = source.status();
        synchronized (lock) {
            if (state instanceof SourceState.Closed) {
                return; // cancelled while admitted
            }
            apply(new SourceState.Accepted(resumed));
            sendControl(SourceFrame.newBuilder().setAccepted(OpenAccepted.newBuilder()
                    .setMode(resumed.isPresent() ? OpenMode.OPEN_MODE_RESUMED : OpenMode.OPEN_MODE_BOOTSTRAP)
                    .setSourceHead(js.headSequence()).setOldestRetained(js.oldestRetainedSequence())
                    .setWindowBytes(a.windowBytes())));
        }
        Thread.ofVirtual().name("inventory-session-source-" + a.requester().nodeId()).start(this::runPump);
    }

    private String stoppedDetail(ErrorCause stopped) {
        return stopped == ErrorCause.FENCED ? "source incarnation " + server.self() + " is fenced" : "source is shutting down";
    }

    /** SNAP-8: resume only a view this incarnation committed, from a cursor its journal still holds. */
    private Optional<Position> resumable(Optional<InstalledCursor> resume) {
        if (resume.isEmpty() || !server.isCommittedView(resume.get().viewId())) {
            return Optional.empty();
        }
        long c = resume.get().watermark();
        boolean retained = c <= source.headSequence() && c >= source.oldestRetainedSequence() - 1;
        return retained ? Optional.of(new Position(resume.get().viewId(), c)) : Optional.empty();
    }

    private Optional<Refusal> onFrame(RequesterFrame frame) {
        if (!frame.hasSessionId() || !frame.getSessionId().equals(wireSessionId)) {
            mismatchDrops.incrementAndGet();
            metrics.sessionMismatchDrops.increment();
            return Optional.empty(); // SES-6: dropped and counted, never applied
        }
        MembershipView view = server.membership();
        if (!view.valid()) {
            return Optional.of(new Refusal(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote admission"));
        }
        if (!view.isAdmitted(open.requester())) {
            return Optional.of(new Refusal(ErrorCause.UNKNOWN_REQUESTER_INCARNATION,
                    "requester " + open.requester() + " is no longer admitted"));
        }
        return switch (frame.getBodyCase()) {
            case ACK -> onAck(frame.getAck());
            case FLUSH_THROUGH -> onFlushThrough(frame.getFlushThrough().getTargetSequence());
            case RESUME_FROM -> onRegenerate("resume_from", frame.getResumeFrom().hasViewId(), frame.getResumeFrom().getViewId(),
                    frame.getResumeFrom().getAppliedCursor());
            case NEED_REPAIR -> onRegenerate("need_repair", frame.getNeedRepair().hasViewId(), frame.getNeedRepair().getViewId(),
                    frame.getNeedRepair().getAppliedCursor());
            case ERROR -> {
                LOG.debug("requester {} closed the session: {} {}", open.requester(), frame.getError().getCause(),
                        frame.getError().getDetail());
                closeQuietly("requester sent Error " + frame.getError().getCause());
                yield Optional.empty();
            }
            case OPEN -> Optional.of(new Refusal(ErrorCause.MALFORMED_FRAME, "a second Open in one session"));
            case BODY_NOT_SET -> Optional.of(new Refusal(ErrorCause.MALFORMED_FRAME, "requester frame without a body"));
        };
    }

    /** SES-13: a contiguous ACK returns exactly its ledgered bytes once; a future ACK is a protocol error. */
    private Optional<Refusal> onAck(Ack ack) {
        FrameCheck c = new FrameCheck();
        long consumedThrough = c.nonNegative("ack.consumed_through_frame", ack.getConsumedThroughFrame());
        if (!c.ok()) {
            return c.refusal();
        }
        switch (ledger.ack(consumedThrough)) {
            case CreditLedger.AckOutcome.Returned r -> {
                if (r.bytes() > 0) {
                    metrics.ackRoundTripSeconds.observeNanos(clock.nanoTime() - r.sentNanos());
                    wake.raise();
                }
            }
            case CreditLedger.AckOutcome.Duplicate d -> metrics.duplicateAcks.increment();
            case CreditLedger.AckOutcome.Future f -> {
                return Optional.of(new Refusal(ErrorCause.FUTURE_ACK,
                        "ack of frame " + consumedThrough + " is above the last sent frame " + f.lastSentFrame()));
            }
        }
        return Optional.empty();
    }

    /** PUB-4, API-2: expose everything through the target promptly. */
    private Optional<Refusal> onFlushThrough(long target) {
        FrameCheck c = new FrameCheck();
        long t = c.nonNegative("flush_through.target_sequence", target);
        if (!c.ok()) {
            return c.refusal();
        }
        synchronized (lock) {
            flushTarget = Math.max(flushTarget, t);
        }
        wake.raise();
        return Optional.empty();
    }

    /**
     * DELTA-8/DELTA-9/DELTA-10: regenerate from the receiver's applied cursor, never above what was sent on
     * that view. Checked and posted under the lock, so the pump takes it against the same position.
     */
    private Optional<Refusal> onRegenerate(String body, boolean hasView, Uuid wireView, long appliedCursor) {
        FrameCheck c = new FrameCheck();
        UUID viewId = c.uuid(body + ".view_id", hasView, wireView);
        long applied = c.nonNegative(body + ".applied_cursor", appliedCursor);
        if (!c.ok()) {
            return c.refusal();
        }
        synchronized (lock) {
            Optional<Position> at = state.position();
            if (at.isPresent() && at.get().view().equals(viewId) && applied > at.get().cursor()) {
                return Optional.of(new Refusal(ErrorCause.MALFORMED_FRAME,
                        "applied_cursor " + applied + " is above the cursor sent (" + at.get().cursor() + ")"));
            }
            regenerate = new InstalledCursor(viewId, applied);
        }
        wake.raise();
        return Optional.empty();
    }

    @Override
    public void onError(Throwable t) {
        closeQuietly("transport error: " + t);
    }

    @Override
    public void onCompleted() {
        closeQuietly("requester half-closed");
    }

    // ---------------------------------------------------------------- sending and closing

    /** Under {@link #lock}: numbers and sends a control frame (numbered, not ledgered: SES-12, SES-13). */
    private void sendControl(SourceFrame.Builder b) {
        long n = nextFrame++;
        EncodedFrame f = EncodedFrame.of(b.setSessionId(wireSessionId).setFrameNumber(n).build());
        ledger.noteSent(n);
        emit(f);
    }

    /** Under {@link #lock}. */
    private void emit(EncodedFrame f) {
        metrics.framesSent.inc(f.body());
        metrics.encodedBytes.add(f.encodedBytes());
        lastSendNanos = clock.nanoTime();
        out.onNext(f);
    }

    void fail(Refusal r) {
        fail(r.cause(), r.detail());
    }

    /** Sends {@code Error(cause)} and ends the stream; the session is closed (counted by cause). */
    void fail(ErrorCause cause, String detail) {
        synchronized (lock) {
            if (state instanceof SourceState.Closed) {
                return;
            }
            apply(new SourceState.Close(cause.name()));
            server.removed(this); // final before the peer can observe the Error
            metrics.rejections.inc(cause);
            try {
                emit(EncodedFrame.of(SourceFrame.newBuilder().setSessionId(wireSessionId == null ? Uuid.getDefaultInstance() : wireSessionId)
                        .setFrameNumber(nextFrame++).setError(Wire.error(cause, detail, config.frameEncodedBytesMax())).build()));
                out.onCompleted();
            } catch (RuntimeException e) { // the transport already ended: the peer learns it from the stream end
                LOG.debug("error frame not delivered: {}", e.toString());
            }
        }
        LOG.debug("session {} closed: {} {}", open == null ? "(unopened)" : open.requester(), cause, detail);
        ended();
    }

    void closeQuietly(String reason) {
        synchronized (lock) {
            if (state instanceof SourceState.Closed) {
                return;
            }
            apply(new SourceState.Close(reason));
            try {
                out.onCompleted();
            } catch (RuntimeException e) { // already ended: nothing left to close
                LOG.trace("stream already ended: {}", e.toString());
            }
        }
        ended();
    }

    private void ended() {
        server.removed(this);
        wake.raise(); // the pump sees Closed at its next look and ends
    }

    // ---------------------------------------------------------------- the pump (one virtual thread)

    /** What one pump step came to. */
    private sealed interface Step {
        /** Go on: look at the state again. */
        record Next() implements Step {}

        /** A data frame went out as {@code frame}, ledgered at {@code bytes}. */
        record Sent(long frame, int bytes) implements Step {}

        /** The pump ends: the session is already closed (empty), or fails with {@code failure}. */
        record Stop(Optional<Refusal> failure) implements Step {}
    }

    private static final Step NEXT = new Step.Next();
    private static final Step CLOSED = new Step.Stop(Optional.empty());

    private static Step failure(ErrorCause cause, String detail) {
        return new Step.Stop(Optional.of(new Refusal(cause, detail)));
    }

    private void runPump() {
        Optional<Refusal> failure;
        try {
            failure = pump();
        } catch (InterruptedException e) { // nothing in this package interrupts the pump; treat it as shutdown
            failure = Optional.of(new Refusal(ErrorCause.SHUTTING_DOWN, "session pump interrupted"));
        } catch (RuntimeException e) { // a bug: reported once, and the session ends with INTERNAL
            LOG.warn("session pump for {} failed", open.requester(), e);
            failure = Optional.of(new Refusal(ErrorCause.INTERNAL, e.toString()));
        } finally {
            source.disarmWake(appendWake);
        }
        failure.ifPresent(this::fail);
    }

    private Optional<Refusal> pump() throws InterruptedException {
        window = source.openWindow(clock::nanoTime);
        snapshotBackoff.reset();
        while (true) {
            Step step = switch (state()) {
                case SourceState.Bootstrapping b -> snapshotAttempt();
                case SourceState.Streaming s -> streamStep(s);
                case SourceState.Closed c -> CLOSED;
                case SourceState.Opening o -> throw new IllegalStateException("the pump starts only after Accepted");
            };
            if (step instanceof Step.Stop stop) {
                return stop.failure();
            }
        }
    }

    /**
     * Waits for credit, then numbers, ledgers and sends a data frame (SES-12, SES-13) and applies
     * {@code after} (if any) in the same step. The frame is encoded once, before numbering; its size does not
     * depend on the frame number (fixed64), so the size measured before numbering is the ledgered size.
     */
    private Step sendData(UnnumberedFrame frame, SourceState.Event after) throws InterruptedException {
        return sendData(frame, after, NOT_COUNTED);
    }

    /** No per-frame counters beyond those {@link #emit} keeps. */
    private static final IntConsumer NOT_COUNTED = bytes -> { };

    /**
     * As {@link #sendData(UnnumberedFrame, SourceState.Event)}, and runs {@code countBeforeEmit} with the frame's
     * encoded size once it is numbered and ledgered, before it is handed to the stream: a counter moved after the
     * send could still read zero when the peer has already applied the frame (issue 25).
     */
    private Step sendData(UnnumberedFrame frame, SourceState.Event after, IntConsumer countBeforeEmit)
            throws InterruptedException {
        int bytes = frame.encodedBytes();
        if (bytes > config.frameEncodedBytesMax()) { // SES-10, DELTA-3: an indivisible oversized record
            return failure(ErrorCause.FRAME_TOO_LARGE, frame.body() + " frame of " + bytes + " encoded bytes exceeds frameEncodedBytesMax ("
                    + config.frameEncodedBytesMax() + "); a single record too large for one frame is not sendable");
        }
        while (true) {
            synchronized (lock) {
                if (state instanceof SourceState.Closed) {
                    return CLOSED;
                }
                if (!ledger.full(bytes)) {
                    long n = nextFrame++;
                    EncodedFrame f = frame.number(n);
                    ledger.charge(n, bytes);
                    metrics.peakCredit(ledger.peakOutstandingBytes());
                    countBeforeEmit.accept(bytes);
                    emit(f);
                    if (after != null) {
                        apply(after);
                    }
                    return new Step.Sent(n, bytes);
                }
            }
            livenessIfDue();
            wake.await(livenessRemainingNanos()); // an ACK that returns credit raises the signal
        }
    }

    /** A data frame built by the generated classes (SnapshotBegin, SnapshotCommit), with a placeholder number. */
    private Step sendData(SourceFrame.Builder b, SourceState.Event after) throws InterruptedException {
        return sendData(UnnumberedFrame.of(b.setSessionId(wireSessionId).setFrameNumber(Long.MAX_VALUE).build()), after);
    }

    private Step sendDelta(CoalescedInterval ci, boolean replay) throws InterruptedException {
        Step sent = sendData(SourceFrameEncoder.delta(open.sessionId(), ci.interval(), ci.records()),
                replay ? null : new SourceState.Advanced(ci.interval()), bytes -> {
                    metrics.originalMutations.add(ci.interval().length());
                    metrics.coalescedRecords.add(ci.records().size());
                    if (replay) {
                        metrics.snapshotReplayBytes.add(bytes);
                    }
                });
        if (sent instanceof Step.Sent && !replay) {
            CrashPoints.reach(CrashPoints.Point.DELTA_SENT); // off unless -Dorbitkv.crashpoints (issue 17)
        }
        return sent;
    }

    /** DELTA-11, DELTA-13, IDX-11: idle liveness carries the head, never progress. */
    private void livenessIfDue() {
        if (sinceLastSendNanos() < livenessIntervalNanos()) {
            return;
        }
        JournalStatus js = source.status();
        synchronized (lock) {
            if (!(state instanceof SourceState.Closed)) {
                sendControl(SourceFrame.newBuilder().setLiveness(Liveness.newBuilder().setSourceHead(js.headSequence())
                        .setOldestRetained(js.oldestRetainedSequence()).setJournalBytes(js.journalBytes())));
            }
        }
    }

    private long livenessIntervalNanos() {
        return TimeUnit.MILLISECONDS.toNanos(config.livenessIntervalMs());
    }

    private long sinceLastSendNanos() {
        synchronized (lock) {
            return clock.nanoTime() - lastSendNanos;
        }
    }

    /** Time until liveness is due, at least 1 ns. */
    private long livenessRemainingNanos() {
        return Math.max(1, livenessIntervalNanos() - sinceLastSendNanos());
    }

    /** Waits until {@code untilNanos} (or the session closes), sending liveness meanwhile. */
    private Step pause(long untilNanos) throws InterruptedException {
        while (true) {
            if (state() instanceof SourceState.Closed) {
                return CLOSED;
            }
            long left = untilNanos - clock.nanoTime();
            if (left <= 0) {
                return NEXT;
            }
            livenessIfDue();
            wake.await(Math.min(left, livenessRemainingNanos()));
        }
    }

    /** SNAP-1..SNAP-5: S0, pages, S1, replay (S0, S1], commit; a trimmed attempt retries after backoff (SNAP-4). */
    private Step snapshotAttempt() throws InterruptedException {
        snapshotAttempts++;
        ScopeDigest scopeDigest = open.scope().digest();
        SnapshotScan scan = source.openSnapshot(open.scope());
        UUID viewId = UUID.randomUUID();
        Uuid wireView = Wire.uuid(viewId);
        TranscriptDigest.Builder transcript = TranscriptDigest.builder();
        Step begin = sendData(SourceFrame.newBuilder().setSnapshotBegin(SnapshotBegin.newBuilder().setViewId(wireView)
                .setS0(scan.s0()).setScopeDigest(ByteString.copyFrom(scopeDigest.bytes()))), null);
        if (!(begin instanceof Step.Sent b)) {
            return begin;
        }
        transcript.begin(b.frame(), viewId, scopeDigest, scan.s0());
        long last = b.frame();
        SnapshotScan.ScanStep.ScanEnd end;
        while (true) {
            SnapshotScan.ScanStep step = scan.nextPage();
            if (step instanceof SnapshotScan.ScanStep.Page p) {
                Step sent = sendData(SourceFrameEncoder.page(open.sessionId(), viewId, p.ordinal(), p.records()), null);
                if (!(sent instanceof Step.Sent s)) {
                    return sent;
                }
                last = s.frame();
                metrics.snapshotPageBytes.add(s.bytes());
                transcript.page(last, p.ordinal(), p.records());
                CrashPoints.reach(CrashPoints.Point.SNAPSHOT_PAGE_SENT); // off unless -Dorbitkv.crashpoints (issue 17)
            } else if (step instanceof SnapshotScan.ScanStep.ScanEnd e) {
                end = e;
                break;
            } else {
                return aborted(((SnapshotScan.ScanStep.Aborted) step).detail());
            }
        }
        while (true) {
            SnapshotScan.ReplayStep step = scan.nextReplay(config.replayIntervalsPerRead());
            if (step instanceof SnapshotScan.ReplayStep.Replay r) {
                for (CoalescedInterval ci : r.intervals()) {
                    Step sent = sendDelta(ci, true);
                    if (!(sent instanceof Step.Sent s)) {
                        return sent;
                    }
                    last = s.frame();
                    transcript.replay(last, ci.interval(), ci.records());
                }
                if (r.complete()) {
                    break;
                }
            } else {
                SnapshotScan.ReplayStep.Aborted a = (SnapshotScan.ReplayStep.Aborted) step;
                if (a.cause() == SnapshotScan.SnapshotAbortCause.RECORD_TOO_LARGE) {
                    return failure(ErrorCause.FRAME_TOO_LARGE, a.detail()); // retrying cannot help (DELTA-3)
                }
                return aborted(a.detail());
            }
        }
        server.committed(viewId); // before the commit frame: a requester may resume it as soon as it installs (SNAP-8)
        Step commit = sendData(SourceFrame.newBuilder().setSnapshotCommit(SnapshotCommit.newBuilder().setViewId(wireView)
                .setS1(end.s1()).setPageCount(end.pageCount()).setFirstFrame(b.frame()).setLastFrame(last)
                .setMaxScannedSequence(end.maxScannedSequence())
                .setTranscriptDigest(ByteString.copyFrom(transcript.finish().bytes()))),
                new SourceState.Committed(new Position(viewId, end.s1())));
        if (commit instanceof Step.Sent) {
            window = source.openWindow(clock::nanoTime);
            snapshotBackoff.reset();
            return NEXT;
        }
        return commit;
    }

    /** SNAP-4: a needed interval was trimmed; retry from a new S0 after a jittered, doubling backoff. */
    private Step aborted(String detail) throws InterruptedException {
        snapshotAborts++;
        metrics.rejections.inc(ErrorCause.SNAPSHOT_ABORTED_TRIMMED);
        LOG.debug("snapshot for {} aborted ({}); retrying from a new S0 after backoff", open.requester(), detail);
        long sleepNanos = TimeUnit.MILLISECONDS.toNanos(snapshotBackoff.nextDelayMs());
        return pause(clock.nanoTime() + sleepNanos);
    }

    /** DELTA-1..DELTA-3, DELTA-10, DELTA-14, PUB-4: one look at the mailbox, the head and the window. */
    private Step streamStep(SourceState.Streaming at) throws InterruptedException {
        long ft;
        synchronized (lock) {
            if (state != at) {
                return NEXT; // closed meanwhile
            }
            if (regenerate != null) {
                SourceState.Event e = SourceState.onRegenerationRequest(at, regenerate, source.oldestRetainedSequence());
                regenerate = null;
                apply(e);
                if (e instanceof SourceState.Rebootstrap) {
                    snapshotBackoff.reset();
                }
                window = source.openWindow(clock::nanoTime);
                return NEXT;
            }
            ft = flushTarget;
            flushTarget = 0;
        }
        long cursor = at.at().cursor();
        long head = source.headSequence();
        if (ft > 0) {
            window.flushThrough(Math.min(ft, head));
            if (ft > head) {
                synchronized (lock) {
                    flushTarget = Math.max(flushTarget, ft); // the rest once appended
                }
            }
        }
        if (head > cursor) {
            window.observe(cursor, head);
        }
        return switch (window.decide(cursor)) {
            case CoalescingWindow.Decision.ReadNow now -> readAndSend(cursor, head);
            case CoalescingWindow.Decision.WaitUntil w -> {
                livenessIfDue();
                wake.await(Math.min(w.deadlineMonoNanos() - clock.nanoTime(), livenessRemainingNanos()));
                yield NEXT;
            }
            // unread journal is never left waiting for another append
            case CoalescingWindow.Decision.Idle idle -> head > cursor ? readAndSend(cursor, head) : awaitAppend(cursor);
        };
    }

    private Step readAndSend(long cursor, long head) throws InterruptedException {
        ReadOutcome outcome = source.read(cursor, open.scope(), config.replayIntervalsPerRead());
        // The window closes only if this read reaches the observed head; a read bounded by
        // replayIntervalsPerRead leaves it open so the rest is read without waiting for a new append.
        window.readStarted(cursor, outcome instanceof ReadOutcome.Intervals iv ? iv.endCursor(cursor) : head);
        return switch (outcome) {
            case ReadOutcome.Intervals iv -> {
                for (CoalescedInterval ci : iv.intervals()) {
                    Step sent = sendDelta(ci, false);
                    if (!(sent instanceof Step.Sent)) {
                        yield sent;
                    }
                }
                yield NEXT;
            }
            case ReadOutcome.Trimmed t -> rebootstrap(); // DELTA-10: history gone, a new snapshot (BND-4)
            case ReadOutcome.BeyondHead b -> rebootstrap();
            case ReadOutcome.RecordTooLarge big -> failure(ErrorCause.FRAME_TOO_LARGE, "record " + big.sequence()
                    + " is " + big.bytes() + " bytes alone; " + big.bound() + " is " + big.boundBytes());
        };
    }

    private Step rebootstrap() {
        synchronized (lock) {
            if (state instanceof SourceState.Closed) {
                return CLOSED;
            }
            apply(new SourceState.Rebootstrap());
        }
        snapshotBackoff.reset();
        return NEXT;
    }

    /** Idle: wait for one append (broadcast, DELTA-14), an inbound request or liveness time, on the one signal. */
    private Step awaitAppend(long cursor) throws InterruptedException {
        livenessIfDue();
        switch (source.armWakeAbove(cursor, appendWake)) {
            case AwaitOutcome.Advanced a -> {
                // appended meanwhile: read at once
            }
            case AwaitOutcome.Armed a -> {
                wake.await(livenessRemainingNanos());
                source.disarmWake(appendWake); // woken by something else: give the slot back
            }
            case AwaitOutcome.WaitersExhausted w -> wake.await(TimeUnit.MILLISECONDS.toNanos(config.ackIntervalMs())); // poll (INV-9)
        }
        return NEXT;
    }
}
