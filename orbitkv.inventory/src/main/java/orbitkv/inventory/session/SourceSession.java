package orbitkv.inventory.session;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import orbitkv.inventory.AwaitOutcome;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.CoalescingWindow;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.JournalStatus;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.SourceSessionStatus.Phase;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.codec.EncodedFrame;
import orbitkv.inventory.codec.SourceFrameEncoder;
import orbitkv.inventory.codec.UnnumberedFrame;
import orbitkv.inventory.session.Wire.Refused;
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
import orbitkv.membership.MembershipView;
import orbitkv.membership.RetryBackoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source end of one directed session (SES-2..SES-14, DELTA-1..DELTA-14, SNAP-1..SNAP-5).
 *
 * <p>Inbound frames (ACK, FlushThrough, ResumeFrom, NeedRepair, Error) are handled on the gRPC thread and
 * never wait behind encoding (SES-3): an ACK returns credit, a flush or regeneration request lands in a
 * single-slot mailbox (latest wins, so bounded) and wakes the pump. The pump, one virtual thread, encodes
 * snapshot pages, replay and deltas outside the inventory lock (BND-1), waits for credit before each data
 * frame (SES-13) and sends idle liveness (DELTA-13). Sends are serialized by one lock that also numbers
 * frames (SES-12).
 */
final class SourceSession implements StreamObserver<Inbound<RequesterFrame>> {
    private static final Logger LOG = LoggerFactory.getLogger(SourceSession.class);
    private static final long PARK_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final SessionServer server;
    private final ServerCallStreamObserver<EncodedFrame> out;
    private final SessionConfig config;
    private final InventorySource source;
    private final SessionMetrics metrics;
    private final Object sendLock = new Object();
    private final AtomicLong flushTarget = new AtomicLong();
    private final AtomicReference<InstalledCursor> regenerate = new AtomicReference<>();
    private final AtomicLong mismatchDrops = new AtomicLong();
    /** Written by the pump only, read by status (DIAG-1). */
    private volatile long snapshotAttempts;
    private volatile long snapshotAborts;

    private long nextFrame = 1;
    private long lastSendNanos;
    private volatile boolean closed;
    private volatile Phase phase = Phase.OPENING;
    private volatile OpenCheck.Accepted open;
    private volatile Uuid wireSessionId;
    private volatile CreditLedger ledger;
    private volatile Thread pump;
    private volatile boolean pumpAwaiting;
    private volatile long cursor;
    private volatile UUID committedView;
    private ScopeDigest scopeDigest;

    SourceSession(SessionServer server, ServerCallStreamObserver<EncodedFrame> out) {
        this.server = server;
        this.out = out;
        this.config = server.config();
        this.source = server.source();
        this.metrics = server.sessionMetrics();
        out.setOnCancelHandler(() -> closeQuietly());
    }

    Incarnation requester() {
        OpenCheck.Accepted a = open;
        return a == null ? null : a.requester();
    }

    SourceSessionStatus status() {
        CreditLedger l = ledger;
        OpenCheck.Accepted a = open;
        return new SourceSessionStatus(a == null ? null : a.requester(), a == null ? null : a.sessionId(),
                closed ? Phase.CLOSED : phase, cursor, l == null ? 0 : l.lastSentFrame(),
                l == null ? 0 : l.outstandingBytes(), l == null ? 0 : l.peakOutstandingBytes(),
                l == null ? 0 : l.returnedBytes(), l == null ? 0 : l.duplicateAcks(), mismatchDrops.get(),
                snapshotAttempts, snapshotAborts);
    }

    // ---------------------------------------------------------------- inbound (gRPC thread)

    @Override
    public void onNext(Inbound<RequesterFrame> in) {
        if (closed) {
            return;
        }
        switch (in) {
            case Inbound.Oversized<RequesterFrame> o -> fail(open == null ? ErrorCause.OPEN_TOO_LARGE : ErrorCause.FRAME_TOO_LARGE,
                    "requester frame of " + o.encodedBytes() + " bytes exceeds openEncodedBytesMax (" + o.boundBytes() + ")");
            case Inbound.Unparseable<RequesterFrame> u -> fail(ErrorCause.MALFORMED_FRAME, "unparseable frame: " + u.detail());
            case Inbound.Parsed<RequesterFrame> p -> {
                metrics.frames.labelValues("source", "received", p.message().getBodyCase().name()).inc();
                metrics.bytes.labelValues("source", "encoded").inc(p.encodedBytes());
                if (open == null) {
                    onOpen(p.message());
                } else {
                    onFrame(p.message());
                }
            }
        }
    }

    private void onOpen(RequesterFrame frame) {
        OpenCheck.Accepted a;
        try {
            a = OpenCheck.check(frame, server.cluster(), server.self(), server.membership(), config);
        } catch (Refused r) {
            wireSessionId = frame.hasSessionId() ? frame.getSessionId() : Uuid.getDefaultInstance();
            fail(r.cause, r.getMessage());
            return;
        }
        wireSessionId = Wire.uuid(a.sessionId());
        ledger = new CreditLedger(a.windowBytes(), config.windowFramesMax());
        scopeDigest = a.scope().digest();
        open = a;
        ErrorCause refusal = server.admit(this);
        if (refusal != null) {
            fail(refusal, refusal == ErrorCause.SESSION_LIMIT
                    ? "source serves sessionsPerSourceMax (" + config.sessionsPerSourceMax() + ") sessions" : "source is fenced");
            return;
        }
        boolean resumed = resumable(a.resume());
        if (resumed) {
            cursor = a.resume().get().watermark();
            committedView = a.resume().get().viewId();
        }
        phase = resumed ? Phase.STREAMING : Phase.BOOTSTRAPPING;
        JournalStatus js = source.status();
        sendControl(SourceFrame.newBuilder().setAccepted(OpenAccepted.newBuilder()
                .setMode(resumed ? OpenMode.OPEN_MODE_RESUMED : OpenMode.OPEN_MODE_BOOTSTRAP)
                .setSourceHead(js.headSequence()).setOldestRetained(js.oldestRetainedSequence())
                .setWindowBytes(a.windowBytes())));
        Thread t = Thread.ofVirtual().name("inventory-session-source-" + a.requester().nodeId()).unstarted(this::runPump);
        pump = t;
        t.start();
    }

    /** SNAP-8: resume only a view this incarnation committed, from a cursor its journal still holds. */
    private boolean resumable(Optional<InstalledCursor> resume) {
        if (resume.isEmpty() || !server.isCommittedView(resume.get().viewId())) {
            return false;
        }
        long c = resume.get().watermark();
        return c <= source.headSequence() && c >= source.oldestRetainedSequence() - 1;
    }

    private void onFrame(RequesterFrame frame) {
        if (!frame.hasSessionId() || !frame.getSessionId().equals(wireSessionId)) {
            mismatchDrops.incrementAndGet();
            metrics.sessionMismatchDrops.labelValues("source").inc();
            return; // SES-6: dropped and counted, never applied
        }
        MembershipView view = server.membership();
        if (!view.valid()) {
            fail(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote admission");
            return;
        }
        if (!view.isAdmitted(open.requester())) {
            fail(ErrorCause.UNKNOWN_REQUESTER_INCARNATION, "requester " + open.requester() + " is no longer admitted");
            return;
        }
        try {
            switch (frame.getBodyCase()) {
                case ACK -> onAck(Wire.nonNegative("ack.consumed_through_frame", frame.getAck().getConsumedThroughFrame()));
                case FLUSH_THROUGH -> {
                    flushTarget.accumulateAndGet(
                            Wire.nonNegative("flush_through.target_sequence", frame.getFlushThrough().getTargetSequence()), Math::max);
                    wake();
                }
                case RESUME_FROM -> regenerate(Wire.requiredUuid("resume_from.view_id", frame.getResumeFrom().hasViewId(),
                        frame.getResumeFrom().getViewId()), Wire.nonNegative("resume_from.applied_cursor",
                        frame.getResumeFrom().getAppliedCursor()));
                case NEED_REPAIR -> regenerate(Wire.requiredUuid("need_repair.view_id", frame.getNeedRepair().hasViewId(),
                        frame.getNeedRepair().getViewId()), Wire.nonNegative("need_repair.applied_cursor",
                        frame.getNeedRepair().getAppliedCursor()));
                case ERROR -> {
                    LOG.debug("requester {} closed the session: {} {}", open.requester(), frame.getError().getCause(),
                            frame.getError().getDetail());
                    closeQuietly();
                }
                case OPEN -> throw new Refused(ErrorCause.MALFORMED_FRAME, "a second Open in one session");
                case BODY_NOT_SET -> throw new Refused(ErrorCause.MALFORMED_FRAME, "requester frame without a body");
            }
        } catch (Refused r) {
            fail(r.cause, r.getMessage());
        }
    }

    /** SES-13: a contiguous ACK returns exactly its ledgered bytes once; a future ACK is a protocol error. */
    private void onAck(long consumedThrough) throws Refused {
        switch (ledger.ack(consumedThrough)) {
            case CreditLedger.AckOutcome.Returned r -> {
                if (r.bytes() > 0) {
                    metrics.ackRoundTripSeconds.observe((System.nanoTime() - r.sentNanos()) / 1e9);
                    wake();
                }
            }
            case CreditLedger.AckOutcome.Duplicate d -> metrics.duplicateAcks.inc();
            case CreditLedger.AckOutcome.Future f -> throw new Refused(ErrorCause.FUTURE_ACK,
                    "ack of frame " + consumedThrough + " is above the last sent frame " + f.lastSentFrame());
        }
    }

    /** DELTA-8/DELTA-9/DELTA-10: regenerate from the receiver's applied cursor (never above what was sent). */
    private void regenerate(UUID viewId, long appliedCursor) throws Refused {
        if (viewId.equals(committedView) && appliedCursor > cursor) {
            throw new Refused(ErrorCause.MALFORMED_FRAME,
                    "applied_cursor " + appliedCursor + " is above the cursor sent (" + cursor + ")");
        }
        regenerate.set(new InstalledCursor(viewId, appliedCursor));
        wake();
    }

    @Override
    public void onError(Throwable t) {
        closeQuietly();
    }

    @Override
    public void onCompleted() {
        closeQuietly();
    }

    // ---------------------------------------------------------------- sending

    private static final class Closed extends RuntimeException {
        Closed() {
            super(null, null, false, false);
        }
    }

    /**
     * A data frame that would exceed this session's encoded frame bound (SES-10): never sent; the session
     * ends with {@code FRAME_TOO_LARGE} (DELTA-3's explicit error for an indivisible oversized record).
     */
    private static final class FrameTooLarge extends RuntimeException {
        FrameTooLarge(String detail) {
            super(detail, null, false, false);
        }
    }

    private long sendControl(SourceFrame.Builder b) {
        synchronized (sendLock) {
            if (closed) {
                throw new Closed();
            }
            long n = nextFrame++;
            EncodedFrame f = EncodedFrame.of(b.setSessionId(wireSessionId).setFrameNumber(n).build());
            CreditLedger l = ledger;
            if (l != null) {
                l.noteSent(n);
            }
            emit(f);
            return n;
        }
    }

    /** The number and encoded size of a sent data frame. */
    private record Sent(long frame, int bytes) {}

    /** A data frame built by the generated classes (SnapshotBegin, SnapshotCommit), with a placeholder number. */
    private Sent sendData(SourceFrame.Builder b) throws InterruptedException {
        return sendData(UnnumberedFrame.of(b.setSessionId(wireSessionId).setFrameNumber(Long.MAX_VALUE).build()));
    }

    /**
     * Waits for credit, then numbers, ledgers and sends a data frame (SES-12, SES-13). The frame is encoded
     * once, before numbering; its size does not depend on the frame number (fixed64), so the size measured
     * before numbering is the ledgered size, and numbering patches 8 bytes under the send lock.
     */
    private Sent sendData(UnnumberedFrame frame) throws InterruptedException {
        int bytes = frame.encodedBytes();
        if (bytes > config.frameEncodedBytesMax()) {
            throw new FrameTooLarge(frame.body() + " frame of " + bytes + " encoded bytes exceeds frameEncodedBytesMax ("
                    + config.frameEncodedBytesMax() + "); a single record too large for one frame is not sendable");
        }
        while (ledger.full(bytes)) {
            awaitWake(PARK_MAX_NANOS);
        }
        synchronized (sendLock) {
            if (closed) {
                throw new Closed();
            }
            long n = nextFrame++;
            EncodedFrame f = frame.number(n);
            ledger.charge(n, bytes);
            metrics.peakCredit(ledger.peakOutstandingBytes());
            emit(f);
            return new Sent(n, bytes);
        }
    }

    private void emit(EncodedFrame f) {
        metrics.frames.labelValues("source", "sent", f.body().name()).inc();
        metrics.bytes.labelValues("source", "encoded").inc(f.encodedBytes());
        lastSendNanos = System.nanoTime();
        out.onNext(f);
    }

    /** Sends {@code Error(cause)} and ends the stream; the session is closed (counted by cause). */
    void fail(ErrorCause cause, String detail) {
        synchronized (sendLock) {
            if (closed) {
                return;
            }
            closed = true;
            server.removed(this); // final before the peer can observe the Error
            metrics.rejections.labelValues("source", cause.name()).inc();
            try {
                EncodedFrame f = EncodedFrame.of(SourceFrame.newBuilder().setSessionId(wireSessionId == null ? Uuid.getDefaultInstance() : wireSessionId)
                        .setFrameNumber(nextFrame++).setError(Wire.error(cause, detail, config.frameEncodedBytesMax())).build());
                emit(f);
                out.onCompleted();
            } catch (RuntimeException e) {
                LOG.debug("error frame not delivered: {}", e.toString());
            }
        }
        LOG.debug("session {} closed: {} {}", open == null ? "(unopened)" : open.requester(), cause, detail);
        finish();
    }

    void closeQuietly() {
        synchronized (sendLock) {
            if (closed) {
                return;
            }
            closed = true;
            try {
                out.onCompleted();
            } catch (RuntimeException e) {
                LOG.trace("stream already ended: {}", e.toString());
            }
        }
        finish();
    }

    private void finish() {
        server.removed(this);
        Thread t = pump;
        if (t != null && t != Thread.currentThread()) {
            t.interrupt();
        }
    }

    boolean closed() {
        return closed;
    }

    // ---------------------------------------------------------------- the pump (one virtual thread)

    private void wake() {
        Thread t = pump;
        if (t != null) {
            LockSupport.unpark(t);
            if (pumpAwaiting) {
                t.interrupt();
            }
        }
    }

    private void awaitWake(long nanos) throws InterruptedException {
        if (closed) {
            throw new Closed();
        }
        livenessIfDue();
        Thread.interrupted();
        LockSupport.parkNanos(Math.min(nanos, livenessRemainingNanos()));
        if (closed) {
            throw new Closed();
        }
    }

    private long livenessRemainingNanos() {
        long due = lastSendNanos + TimeUnit.MILLISECONDS.toNanos(config.livenessIntervalMs());
        return Math.max(1, due - System.nanoTime());
    }

    /** DELTA-11, DELTA-13, IDX-11: idle liveness carries the head, never progress. */
    private void livenessIfDue() {
        if (System.nanoTime() - lastSendNanos >= TimeUnit.MILLISECONDS.toNanos(config.livenessIntervalMs())) {
            JournalStatus js = source.status();
            sendControl(SourceFrame.newBuilder().setLiveness(Liveness.newBuilder().setSourceHead(js.headSequence())
                    .setOldestRetained(js.oldestRetainedSequence()).setJournalBytes(js.journalBytes())));
        }
    }

    private void runPump() {
        try {
            if (phase == Phase.BOOTSTRAPPING) {
                bootstrap();
            }
            stream();
        } catch (Closed | InterruptedException e) {
            // closed: nothing more to send
        } catch (FrameTooLarge e) {
            fail(ErrorCause.FRAME_TOO_LARGE, e.getMessage());
        } catch (RuntimeException e) {
            if (!closed) {
                LOG.warn("session pump for {} failed", open.requester(), e);
                fail(ErrorCause.INTERNAL, e.toString());
            }
        }
    }

    /** SNAP-1..SNAP-5: S0, pages, S1, replay (S0, S1], commit; a trimmed attempt retries with backoff (SNAP-4). */
    private void bootstrap() throws InterruptedException {
        phase = Phase.BOOTSTRAPPING;
        regenerate.set(null);
        RetryBackoff.Sequence backoff = config.snapshotRetryBackoff().sequence();
        while (true) {
            if (snapshotAttempt()) {
                regenerate.set(null);
                phase = Phase.STREAMING;
                return;
            }
            long sleepNanos = TimeUnit.MILLISECONDS.toNanos(backoff.nextDelayMs());
            long until = System.nanoTime() + sleepNanos;
            while (until - System.nanoTime() > 0) {
                awaitWake(until - System.nanoTime());
            }
        }
    }

    private boolean snapshotAttempt() throws InterruptedException {
        snapshotAttempts++;
        Scope scope = open.scope();
        SnapshotScan scan = source.openSnapshot(scope);
        UUID viewId = UUID.randomUUID();
        Uuid wireView = Wire.uuid(viewId);
        TranscriptDigest.Builder transcript = TranscriptDigest.builder();
        long begin = sendData(SourceFrame.newBuilder().setSnapshotBegin(SnapshotBegin.newBuilder().setViewId(wireView)
                .setS0(scan.s0()).setScopeDigest(com.google.protobuf.ByteString.copyFrom(scopeDigest.bytes())))).frame();
        transcript.begin(begin, viewId, scopeDigest, scan.s0());
        long last = begin;
        SnapshotScan.ScanStep.ScanEnd end;
        while (true) {
            SnapshotScan.ScanStep step = scan.nextPage();
            if (step instanceof SnapshotScan.ScanStep.Page p) {
                Sent sent = sendData(SourceFrameEncoder.page(open.sessionId(), viewId, p.ordinal(), p.records()));
                last = sent.frame();
                metrics.snapshotBytes.labelValues("pages").inc(sent.bytes());
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
                    last = sendDelta(ci, true);
                    transcript.replay(last, ci.interval(), ci.records());
                }
                if (r.complete()) {
                    break;
                }
            } else {
                SnapshotScan.ReplayStep.Aborted a = (SnapshotScan.ReplayStep.Aborted) step;
                if (a.cause() == SnapshotScan.SnapshotAbortCause.RECORD_TOO_LARGE) {
                    // Retrying cannot help: the same record would abort every attempt (DELTA-3).
                    throw new FrameTooLarge(a.detail());
                }
                return aborted(a.detail());
            }
        }
        sendData(SourceFrame.newBuilder().setSnapshotCommit(SnapshotCommit.newBuilder().setViewId(wireView)
                .setS1(end.s1()).setPageCount(end.pageCount()).setFirstFrame(begin).setLastFrame(last)
                .setMaxScannedSequence(end.maxScannedSequence())
                .setTranscriptDigest(com.google.protobuf.ByteString.copyFrom(transcript.finish().bytes()))));
        server.committed(viewId);
        committedView = viewId;
        cursor = end.s1();
        return true;
    }

    private boolean aborted(String detail) {
        snapshotAborts++;
        metrics.rejections.labelValues("source", ErrorCause.SNAPSHOT_ABORTED_TRIMMED.name()).inc();
        LOG.debug("snapshot for {} aborted ({}); retrying from a new S0 after backoff", open.requester(), detail);
        return false;
    }

    private long sendDelta(CoalescedInterval ci, boolean replay) throws InterruptedException {
        Sent sent = sendData(SourceFrameEncoder.delta(open.sessionId(), ci.interval(), ci.records()));
        metrics.mutations.labelValues("original").inc(ci.interval().length());
        metrics.mutations.labelValues("coalesced").inc(ci.records().size());
        if (replay) {
            metrics.snapshotBytes.labelValues("replay").inc(sent.bytes());
        } else {
            CrashPoints.reach(CrashPoints.Point.DELTA_SENT); // off unless -Dorbitkv.crashpoints (issue 17)
        }
        return sent.frame();
    }

    /** DELTA-1..DELTA-3, DELTA-10, DELTA-14, PUB-4: coalesced deltas from the cursor, woken by appends. */
    private void stream() throws InterruptedException {
        CoalescingWindow window = source.openWindow();
        while (true) {
            if (closed) {
                throw new Closed();
            }
            Thread.interrupted();
            InstalledCursor r = regenerate.getAndSet(null);
            if (r != null) {
                if (r.viewId().equals(committedView) && r.watermark() >= source.oldestRetainedSequence() - 1) {
                    cursor = r.watermark();
                    window = source.openWindow();
                } else {
                    bootstrap();
                    window = source.openWindow();
                    continue;
                }
            }
            long head = source.headSequence();
            long ft = flushTarget.getAndSet(0);
            if (ft > 0) {
                window.flushThrough(Math.min(ft, head));
                if (ft > head) {
                    flushTarget.accumulateAndGet(ft, Math::max);
                }
            }
            if (head > cursor) {
                window.observe(cursor, head);
            }
            switch (window.decide(cursor)) {
                case CoalescingWindow.Decision.ReadNow now -> readAndSend(window, head);
                case CoalescingWindow.Decision.WaitUntil w -> awaitWake(w.deadlineMonoNanos() - System.nanoTime());
                case CoalescingWindow.Decision.Idle idle -> {
                    if (head > cursor) {
                        readAndSend(window, head); // unread journal is never left waiting for another append
                    } else {
                        awaitAppend();
                    }
                }
            }
        }
    }

    private void readAndSend(CoalescingWindow window, long head) throws InterruptedException {
        ReadOutcome outcome = source.read(cursor, open.scope(), config.replayIntervalsPerRead());
        // The window closes only if this read reaches the observed head; a read bounded by
        // replayIntervalsPerRead leaves it open so the rest is read without waiting for a new append.
        window.readStarted(cursor, outcome instanceof ReadOutcome.Intervals iv ? iv.endCursor(cursor) : head);
        switch (outcome) {
            case ReadOutcome.Intervals iv -> {
                for (CoalescedInterval ci : iv.intervals()) {
                    sendDelta(ci, false);
                    cursor = ci.interval().to();
                }
            }
            case ReadOutcome.Trimmed t -> bootstrap(); // DELTA-10: history gone, a new snapshot (BND-4)
            case ReadOutcome.BeyondHead b -> bootstrap();
            case ReadOutcome.RecordTooLarge big -> fail(ErrorCause.FRAME_TOO_LARGE, "record " + big.sequence()
                    + " is " + big.bytes() + " bytes alone; " + big.bound() + " is " + big.boundBytes());
        }
    }

    /** Idle: wait for one append (broadcast, DELTA-14), an inbound request or liveness time. */
    private void awaitAppend() throws InterruptedException {
        livenessIfDue();
        long seen = cursor;
        pumpAwaiting = true;
        try {
            if (regenerate.get() != null || closed) {
                return;
            }
            AwaitOutcome o = source.awaitAbove(seen, Math.min(PARK_MAX_NANOS * 4, livenessRemainingNanos()));
            if (o instanceof AwaitOutcome.WaitersExhausted) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(config.ackIntervalMs()));
            }
        } catch (InterruptedException e) {
            // woken by an inbound request or close
        } finally {
            pumpAwaiting = false;
            Thread.interrupted();
        }
    }

}
