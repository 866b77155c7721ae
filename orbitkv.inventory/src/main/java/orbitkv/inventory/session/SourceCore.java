package orbitkv.inventory.session;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.JournalStatus;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.codec.EncodedFrame;
import orbitkv.inventory.session.SourceState.Position;
import orbitkv.inventory.source.SourceInventory;
import orbitkv.inventory.wire.Ack;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.OpenAccepted;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.CrashPoints;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeId;

/**
 * The source end of one directed session as a sans-I/O core (issue 38; SES-2..SES-14, DELTA-1..DELTA-14,
 * SNAP-1..SNAP-5): the {@link SourceState} machine, the Open check ({@link OpenCheck}), the receive checks of
 * every requester frame ({@link FrameCheck}, stream identity SES-6, membership SES-5), credit through the real
 * {@link CreditLedger} (SES-13), the regeneration and flush mailbox, the close-with-error, and the send pump
 * ({@link SourcePump}: snapshot pages, replay, deltas through the coalescing window, idle liveness DELTA-13).
 *
 * <p>It owns no thread, socket, timer or clock. Inputs: {@link #onFrame} (a received message), {@link #pump}
 * (time passed, credit returned, or the journal appended: the pump looks again), {@link #fail} and
 * {@link #closeQuietly} (membership, fencing, replacement, shutdown, transport end). Every input carries the
 * caller's time and returns {@link Effect}s in order; {@link #deadlineNanos()} says when the pump is due next.
 * Queries and notifications that belong to the server (admission, committed views) go through {@link Host}.
 * The gRPC shell ({@link SourceSession}) and the simulator ({@code ProtocolSimulator}) drive the same class.
 *
 * <p>Not thread-safe: the caller serializes every step. Status readers may run concurrently (volatile fields).
 */
final class SourceCore {
    /**
     * Seeded bugs of the simulator (issue 38 item 4): each switches off one production check. Package-private and
     * set only by {@code ProtocolSimulator} through {@link #fault}; no Manager option or public type reaches it.
     */
    enum Fault {
        /** Accept an Open naming a stale incarnation of this node (SES-5) despite {@link OpenCheck}'s refusal. */
        ACCEPT_STALE_INCARNATION,
        /** Drop the final delete of a residence from a coalesced delta (PUB-7: a final delete is kept). */
        DROP_DELETE_IN_COALESCING,
        /**
         * A session at {@link SendPriority#BARRIER} with several deltas read sends only the last one, its interval
         * stretched back to the cursor: the watermark jumps past the omitted changes (ROUTE-10 forbids it).
         */
        PRIORITY_SKIPS_OMITTED
    }

    /** What a step asks the shell to do, in order. */
    sealed interface Effect {
        /** Hand {@code frame} to the transport. */
        record Send(EncodedFrame frame) implements Effect {}

        /** Half-close the stream (after an Error, or quietly); nothing follows. */
        record Complete() implements Effect {}

        /** The pump may run now (credit returned, a request posted). */
        record Wake() implements Effect {}

        /** A crash point of the conformance campaign was passed (issue 17); off unless armed. */
        record Reached(CrashPoints.Point point) implements Effect {}
    }

    /** The server's part: admission and committed views (SES-6, BND-3, SNAP-8). Called from within a step. */
    interface Host {
        /** {@code FENCED} or {@code SHUTTING_DOWN} once the source stops, else null (G12). */
        ErrorCause stoppedCause();

        /** Registers this session (replacing an older one of the same requester); null if admitted. */
        ErrorCause admit();

        /** The session ended: it no longer counts against the limit. */
        void removed();

        boolean isCommittedView(UUID viewId);

        void committed(UUID viewId);

        /** The journal's wake-up for this session (armed on the journal's broadcast signal, DELTA-14). */
        Runnable appendWake();
    }

    /** The fixed facts of one source end; {@code viewIds} and {@code random} are seeded in the simulator. */
    record Peer(ClusterIdentity cluster, Incarnation self, SessionConfig config, SourceInventory source,
            SourceCounters metrics, Supplier<MembershipView> membership, Optional<NodeId> peerNodeId,
            Supplier<UUID> viewIds, RandomGenerator random) {}

    final Peer peer;
    final Host host;
    /** The seeded bug of a simulator run; null in production (issue 38 item 4). */
    Fault fault;

    private volatile SourceState state = new SourceState.Opening();
    private volatile OpenCheck.Accepted open;
    private volatile Uuid wireSessionId;
    private volatile CreditLedger ledger;
    private final AtomicLong mismatchDrops = new AtomicLong();
    /** The highest FlushThrough target not yet handed to the window (PUB-4). */
    long flushTarget;
    /** The highest barrier target (a FlushThrough, capped at the head when it arrived) not yet sent; 0: none (ROUTE-10). */
    private long barrierThrough;
    /** The latest regeneration request (one slot, latest wins: bounded). */
    InstalledCursor regenerate;
    private long nextFrame = 1;
    private long lastSendNanos;
    /** The time of the step being run: every clock the core's collaborators read is this value. */
    long nowNanos;
    private List<Effect> out = new ArrayList<>();
    final SourcePump pump;

    SourceCore(Peer peer, Host host) {
        this.peer = peer;
        this.host = host;
        this.pump = new SourcePump(this);
    }

    // ---------------------------------------------------------------- status (any thread)

    SourceState state() {
        return state;
    }

    Incarnation requester() {
        OpenCheck.Accepted a = open;
        return a == null ? null : a.requester();
    }

    OpenCheck.Accepted open() {
        return open;
    }

    Uuid wireSessionId() {
        return wireSessionId;
    }

    CreditLedger ledger() {
        return ledger;
    }

    SourceSessionStatus status() {
        SourceState s = state;
        CreditLedger l = ledger;
        OpenCheck.Accepted a = open;
        return new SourceSessionStatus(a == null ? null : a.requester(), a == null ? null : a.sessionId(),
                s.phase(), s.position().map(Position::cursor).orElse(0L), l == null ? 0 : l.lastSentFrame(),
                l == null ? 0 : l.outstandingBytes(), l == null ? 0 : l.peakOutstandingBytes(),
                l == null ? 0 : l.returnedBytes(), l == null ? 0 : l.duplicateAcks(), mismatchDrops.get(),
                pump.snapshotAttempts(), pump.snapshotAborts());
    }

    /**
     * The class this session's next pump step is scheduled at (ROUTE-10): {@link SendPriority#BARRIER} while a
     * barrier's target is not yet sent, else {@link SendPriority#HIGH} for a favoured requester's subscription, else
     * {@link SendPriority#NORMAL}; always NORMAL when the config turns priority off. It only orders this source's
     * sessions ({@link SendScheduler}); nothing in the session's own stream depends on it.
     */
    SendPriority sendPriority() {
        if (!peer.config().sendPriority()) {
            return SendPriority.NORMAL;
        }
        if (barrierThrough > 0) {
            if (sentThrough() < barrierThrough) {
                return SendPriority.BARRIER;
            }
            barrierThrough = 0; // the barrier's target is sent: the session returns to its class
        }
        OpenCheck.Accepted a = open;
        return a != null && peer.config().priorityRequesters().contains(a.requester().nodeId())
                ? SendPriority.HIGH : SendPriority.NORMAL;
    }

    /**
     * An explicit barrier (FlushThrough, PUB-4) raises this session to {@link SendPriority#BARRIER} until its target
     * is sent; the target counts only up to the head when it arrived, so a target beyond the journal raises nothing
     * it could hold forever.
     */
    void barrier(long target) {
        long through = Math.min(target, peer.source().headSequence());
        if (through > sentThrough()) {
            barrierThrough = Math.max(barrierThrough, through);
        }
    }

    /** The cursor sent on the streaming view; -1 while no view streams (bootstrapping, opening, closed). */
    private long sentThrough() {
        return state instanceof SourceState.Streaming s ? s.at().cursor() : -1;
    }

    /** True once accepted and until closed: the pump has work to look at. */
    boolean pumping() {
        return open != null && !(state instanceof SourceState.Closed) && !(state instanceof SourceState.Opening);
    }

    /** When {@link #pump} is due next (liveness, the window, a snapshot retry, a poll), or {@code Long.MAX_VALUE}. */
    long deadlineNanos() {
        if (!pumping()) {
            return Long.MAX_VALUE;
        }
        return Math.min(lastSendNanos + livenessIntervalNanos(), pump.dueNanos());
    }

    // ---------------------------------------------------------------- inputs

    /** One received message: the Open first, then ACK, FlushThrough, ResumeFrom, NeedRepair or Error. */
    List<Effect> onFrame(long now, Inbound<RequesterFrame> in) {
        nowNanos = now;
        if (state instanceof SourceState.Closed) {
            return drain();
        }
        switch (in) {
            case Inbound.Oversized<RequesterFrame> o -> failing(open == null ? ErrorCause.OPEN_TOO_LARGE : ErrorCause.FRAME_TOO_LARGE,
                    "requester frame of " + o.encodedBytes() + " bytes exceeds openEncodedBytesMax (" + o.boundBytes() + ")");
            case Inbound.Unparseable<RequesterFrame> u -> failing(ErrorCause.MALFORMED_FRAME, "unparseable frame: " + u.detail());
            case Inbound.Parsed<RequesterFrame> p -> {
                peer.metrics().framesReceived.inc(p.message().getBodyCase());
                peer.metrics().encodedBytes.add(p.encodedBytes());
                if (open == null) {
                    onOpen(p.message());
                } else {
                    SourceInbound.check(this, p.message()).ifPresent(this::fail);
                }
            }
        }
        return drain();
    }

    private void onOpen(RequesterFrame frame) {
        ErrorCause stopped = host.stoppedCause();
        if (stopped != null) { // before any check: a closing source's lease may already be gone (G12)
            wireSessionId = frame.hasSessionId() ? frame.getSessionId() : Uuid.getDefaultInstance();
            failing(stopped, stoppedDetail(stopped));
            return;
        }
        OpenCheck.Result checked = OpenCheck.check(frame, peer.cluster(), peer.self(), peer.membership().get(), peer.config(),
                peer.peerNodeId());
        switch (checked) {
            case OpenCheck.Refused r when fault == Fault.ACCEPT_STALE_INCARNATION
                    && r.refusal().cause() == ErrorCause.STALE_SOURCE_INCARNATION -> accept(staleAccepted(frame));
            case OpenCheck.Refused r -> {
                wireSessionId = frame.hasSessionId() ? frame.getSessionId() : Uuid.getDefaultInstance();
                fail(r.refusal());
            }
            case OpenCheck.Accepted a -> accept(a);
        }
    }

    /** The seeded bug ACCEPT_STALE_INCARNATION: what the refused Open would have been accepted as. */
    private OpenCheck.Accepted staleAccepted(RequesterFrame frame) {
        var o = frame.getOpen();
        Incarnation requester = new FrameCheck().incarnation("open.requester", o.hasRequester(), o.getRequester()).orElseThrow();
        return new OpenCheck.Accepted(Wire.uuid(frame.getSessionId()), requester,
                ((OpenCheck.ScopeResult.Valid) OpenCheck.scope(o)).scope(), Optional.empty(), peer.config().receiveWindowBytes());
    }

    private void accept(OpenCheck.Accepted a) {
        wireSessionId = Wire.uuid(a.sessionId());
        ledger = new CreditLedger(a.windowBytes(), peer.config().windowFramesMax());
        open = a;
        ErrorCause refusal = host.admit();
        if (refusal != null) {
            failing(refusal, refusal == ErrorCause.SESSION_LIMIT
                    ? "source serves sessionsPerSourceMax (" + peer.config().sessionsPerSourceMax() + ") sessions" : stoppedDetail(refusal));
            return;
        }
        if (state instanceof SourceState.Closed) {
            return; // closed while admitted
        }
        Optional<Position> resumed = resumable(a.resume());
        JournalStatus js = peer.source().status();
        apply(new SourceState.Accepted(resumed));
        sendControl(SourceFrame.newBuilder().setAccepted(OpenAccepted.newBuilder()
                .setMode(resumed.isPresent() ? OpenMode.OPEN_MODE_RESUMED : OpenMode.OPEN_MODE_BOOTSTRAP)
                .setSourceHead(js.headSequence()).setOldestRetained(js.oldestRetainedSequence())
                .setWindowBytes(a.windowBytes())));
        pump.start();
        emit(new Effect.Wake());
    }

    private String stoppedDetail(ErrorCause stopped) {
        return stopped == ErrorCause.FENCED ? "source incarnation " + peer.self() + " is fenced" : "source is shutting down";
    }

    /** SNAP-8: resume only a view this incarnation committed, from a cursor its journal still holds. */
    private Optional<Position> resumable(Optional<InstalledCursor> resume) {
        if (resume.isEmpty() || !host.isCommittedView(resume.get().viewId())) {
            return Optional.empty();
        }
        long c = resume.get().watermark();
        SourceInventory source = peer.source();
        boolean retained = c <= source.headSequence() && c >= source.oldestRetainedSequence() - 1;
        return retained ? Optional.of(new Position(resume.get().viewId(), c)) : Optional.empty();
    }

    /** SES-6: a frame naming another session is dropped and counted, never applied. */
    void mismatchDropped() {
        mismatchDrops.incrementAndGet();
        peer.metrics().sessionMismatchDrops.increment();
    }

    /** SES-13: a contiguous ACK returns exactly its ledgered bytes once; a future ACK is a protocol error. */
    Optional<Refusal> onAck(Ack ack) {
        FrameCheck c = new FrameCheck();
        long consumedThrough = c.nonNegative("ack.consumed_through_frame", ack.getConsumedThroughFrame());
        if (!c.ok()) {
            return c.refusal();
        }
        switch (ledger.ack(consumedThrough)) {
            case CreditLedger.AckOutcome.Returned r -> {
                if (r.bytes() > 0) {
                    peer.metrics().ackRoundTripSeconds.observeNanos(nowNanos - r.sentNanos());
                    emit(new Effect.Wake());
                }
            }
            case CreditLedger.AckOutcome.Duplicate d -> peer.metrics().duplicateAcks.increment();
            case CreditLedger.AckOutcome.Future f -> {
                return Optional.of(new Refusal(ErrorCause.FUTURE_ACK,
                        "ack of frame " + consumedThrough + " is above the last sent frame " + f.lastSentFrame()));
            }
        }
        return Optional.empty();
    }

    /** Time passed, credit returned or the journal appended: the pump sends what it may now (bounded per step). */
    List<Effect> pump(long now) {
        return pump(now, () -> false);
    }

    /**
     * As {@link #pump(long)}, ending the step early, between two whole actions, once {@code yieldNow} says a session of
     * a higher class waits ({@link SendScheduler#shouldYield}, ROUTE-10); the rest is due at once.
     */
    List<Effect> pump(long now, java.util.function.BooleanSupplier yieldNow) {
        nowNanos = now;
        if (pumping()) {
            try {
                pump.run(yieldNow).ifPresent(this::fail);
            } catch (RuntimeException e) { // a bug: the session ends with INTERNAL
                failing(ErrorCause.INTERNAL, e.toString());
            }
            if (pumping()) {
                livenessIfDue();
            }
        }
        return drain();
    }

    // ---------------------------------------------------------------- sending and closing

    /** The one place the state changes; a new position or a new bootstrap empties the mailbox. */
    void apply(SourceState.Event event) {
        state = SourceState.next(state, event);
        if (event instanceof SourceState.Committed || event instanceof SourceState.Rebootstrap) {
            regenerate = null; // requests named the old position (SNAP-8: a new view is resumed only once committed)
        }
    }

    /** Numbers, ledgers and sends a data frame (SES-12, SES-13); the caller checked the credit. */
    long sendData(orbitkv.inventory.codec.UnnumberedFrame frame, int bytes) {
        long n = nextFrame++;
        EncodedFrame f = frame.number(n);
        ledger.charge(n, bytes, nowNanos);
        peer.metrics().peakCredit(ledger.peakOutstandingBytes());
        emit(f);
        return n;
    }

    /** Numbers and sends a control frame (numbered, not ledgered: SES-12, SES-13). */
    void sendControl(SourceFrame.Builder b) {
        long n = nextFrame++;
        EncodedFrame f = EncodedFrame.of(b.setSessionId(wireSessionId).setFrameNumber(n).build());
        ledger.noteSent(n);
        emit(f);
    }

    /** DELTA-11, DELTA-13, IDX-11: idle liveness carries the head, never progress. */
    private void livenessIfDue() {
        if (nowNanos - lastSendNanos < livenessIntervalNanos()) {
            return;
        }
        JournalStatus js = peer.source().status();
        sendControl(SourceFrame.newBuilder().setLiveness(orbitkv.inventory.wire.Liveness.newBuilder().setSourceHead(js.headSequence())
                .setOldestRetained(js.oldestRetainedSequence()).setJournalBytes(js.journalBytes())));
    }

    long livenessIntervalNanos() {
        return peer.config().livenessIntervalMs() * 1_000_000L;
    }

    private void emit(EncodedFrame f) {
        peer.metrics().framesSent.inc(f.body());
        peer.metrics().encodedBytes.add(f.encodedBytes());
        lastSendNanos = nowNanos;
        emit(new Effect.Send(f));
    }

    void emit(Effect e) {
        out.add(e);
    }

    void fail(Refusal r) {
        failing(r.cause(), r.detail());
    }

    /** Sends {@code Error(cause)} and ends the stream; the session is closed (counted by cause). */
    List<Effect> fail(ErrorCause cause, String detail) {
        failing(cause, detail);
        return drain();
    }

    /** Within a step: as {@link #fail(ErrorCause, String)}, the effects joining the step's. */
    private void failing(ErrorCause cause, String detail) {
        if (state instanceof SourceState.Closed) {
            return;
        }
        apply(new SourceState.Close(cause.name()));
        pump.stop();
        host.removed(); // final before the peer can observe the Error
        peer.metrics().rejections.inc(cause);
        emit(EncodedFrame.of(SourceFrame.newBuilder().setSessionId(wireSessionId == null ? Uuid.getDefaultInstance() : wireSessionId)
                .setFrameNumber(nextFrame++).setError(Wire.error(cause, detail, peer.config().frameEncodedBytesMax())).build()));
        emit(new Effect.Complete());
    }

    /** Ends the stream without an Error (the requester's Error or half-close, a cancel, a transport end). */
    List<Effect> closeQuietly(String reason) {
        closing(reason);
        return drain();
    }

    /** Within a step: as {@link #closeQuietly}, the effects joining the step's. */
    void closing(String reason) {
        if (!(state instanceof SourceState.Closed)) {
            apply(new SourceState.Close(reason));
            pump.stop();
            host.removed();
            emit(new Effect.Complete());
        }
    }

    List<Effect> drain() {
        if (out.isEmpty()) {
            return List.of();
        }
        List<Effect> d = out;
        out = new ArrayList<>();
        return d;
    }
}
