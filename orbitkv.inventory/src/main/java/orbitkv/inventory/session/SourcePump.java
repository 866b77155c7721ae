package orbitkv.inventory.session;

import com.google.protobuf.ByteString;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongConsumer;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.codec.SourceFrameEncoder;
import orbitkv.inventory.codec.UnnumberedFrame;
import orbitkv.inventory.session.SourceState.Position;
import orbitkv.inventory.source.AwaitOutcome;
import orbitkv.inventory.source.CoalescingWindow;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.SnapshotBegin;
import orbitkv.inventory.wire.SnapshotCommit;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.CrashPoints;
import orbitkv.membership.RetryBackoff;

/**
 * The send pump of {@link SourceCore} as steps (issue 38): snapshot attempts (SNAP-1..SNAP-5: S0, pages, S1, replay
 * (S0, S1], commit; a trimmed attempt retries after a jittered doubling backoff, SNAP-4), then deltas through the
 * coalescing window (DELTA-1..DELTA-3, DELTA-10, DELTA-14, PUB-4). Every data frame waits for credit (SES-13): a frame
 * that does not fit stays {@link #pending} until an ACK returns credit. One {@link #run} does at most
 * {@link #STEPS_MAX} actions, so a requester's frame never waits long behind encoding (SES-3); the rest is due at once.
 * When blocked it says why through {@link #dueNanos()} (window, retry, poll) or by arming the journal's wake-up.
 */
final class SourcePump {
    /** Actions per {@link #run}: bounds how long one step holds the session. */
    static final int STEPS_MAX = 16;

    private final SourceCore core;
    private CoalescingWindow window;
    private int backoffAttempt;
    private volatile long snapshotAttempts;
    private volatile long snapshotAborts;
    /** A data frame waiting for credit, and what its send does. */
    private Pending pending;
    private Snap snap;
    private final ArrayDeque<CoalescedInterval> deltas = new ArrayDeque<>();
    private long pauseUntil = -1;
    private long waitUntil = -1;
    private long pollAt = -1;
    private boolean busy;
    private boolean armed;

    private record Pending(UnnumberedFrame frame, int bytes, SourceState.Event after, LongConsumer onSent) {}

    /** The snapshot attempt in progress. */
    private static final class Snap {
        final SnapshotScan scan;
        final UUID viewId;
        final Uuid wireView;
        final TranscriptDigest.Builder transcript = TranscriptDigest.builder();
        final ArrayDeque<CoalescedInterval> replay = new ArrayDeque<>();
        long begin;
        long last;
        SnapshotScan.ScanStep.ScanEnd end;
        boolean replayComplete;

        Snap(SnapshotScan scan, UUID viewId) {
            this.scan = scan;
            this.viewId = viewId;
            this.wireView = Wire.uuid(viewId);
        }
    }

    private sealed interface Step {
        record Moved() implements Step {}

        record Blocked() implements Step {}

        record Failed(Refusal refusal) implements Step {}
    }

    private static final Step MOVED = new Step.Moved();
    private static final Step BLOCKED = new Step.Blocked();

    SourcePump(SourceCore core) {
        this.core = core;
    }

    long snapshotAttempts() {
        return snapshotAttempts;
    }

    long snapshotAborts() {
        return snapshotAborts;
    }

    void start() {
        window = core.peer.source().openWindow(() -> core.nowNanos);
        backoffAttempt = 0;
    }

    /** The session ended: give the journal's wake-up slot back. */
    void stop() {
        disarm();
        pending = null;
        snap = null;
        deltas.clear();
    }

    /** Nothing queued, no snapshot attempt in progress, nothing due at once. */
    boolean idle() {
        return pending == null && snap == null && deltas.isEmpty() && !busy;
    }

    /** When the pump must look again without being woken, or {@code Long.MAX_VALUE}. */
    long dueNanos() {
        if (busy) {
            return core.nowNanos;
        }
        long due = Long.MAX_VALUE;
        for (long t : new long[] {pauseUntil, waitUntil, pollAt}) {
            if (t >= 0) {
                due = Math.min(due, t);
            }
        }
        return due;
    }

    /**
     * Up to {@link #STEPS_MAX} actions, fewer when {@code yieldNow} turns true after an action (a session of a higher
     * class waits, ROUTE-10: the step ends between whole actions and the rest is due at once); a failure closes the
     * session with that cause.
     */
    Optional<Refusal> run(java.util.function.BooleanSupplier yieldNow) {
        disarm();
        busy = false;
        waitUntil = -1;
        pollAt = -1;
        for (int i = 0; i < STEPS_MAX; i++) {
            if (!core.pumping()) {
                return Optional.empty();
            }
            Step s = advance();
            if (s instanceof Step.Failed f) {
                return Optional.of(f.refusal());
            }
            if (s == BLOCKED) {
                return Optional.empty();
            }
            if (yieldNow.getAsBoolean()) {
                break;
            }
        }
        busy = true;
        return Optional.empty();
    }

    private Step advance() {
        if (pending != null) {
            if (core.ledger().full(pending.bytes())) {
                return BLOCKED; // an ACK that returns credit wakes the pump
            }
            Pending p = pending;
            pending = null;
            long n = core.sendData(p.frame(), p.bytes());
            p.onSent().accept(n);
            if (p.after() != null) {
                core.apply(p.after());
            }
            return MOVED;
        }
        if (pauseUntil >= 0) {
            if (core.nowNanos < pauseUntil) {
                return BLOCKED;
            }
            pauseUntil = -1;
        }
        return switch (core.state()) {
            case SourceState.Bootstrapping b -> snapshotStep();
            case SourceState.Streaming s -> streamStep(s);
            default -> BLOCKED;
        };
    }

    /** Queues a data frame; an indivisible oversized record fails the session (SES-10, DELTA-3). */
    private Step queue(UnnumberedFrame frame, SourceState.Event after, LongConsumer onSent) {
        int bytes = frame.encodedBytes();
        int max = core.peer.config().frameEncodedBytesMax();
        if (bytes > max) {
            return new Step.Failed(new Refusal(ErrorCause.FRAME_TOO_LARGE, frame.body() + " frame of " + bytes
                    + " encoded bytes exceeds frameEncodedBytesMax (" + max + "); a single record too large for one frame is not sendable"));
        }
        pending = new Pending(frame, bytes, after, onSent);
        return MOVED;
    }

    private UnnumberedFrame control(SourceFrame.Builder b) {
        return UnnumberedFrame.of(b.setSessionId(core.wireSessionId()).setFrameNumber(Long.MAX_VALUE).build());
    }

    /** A delta (replay or stream); the seeded bug DROP_DELETE_IN_COALESCING drops final deletes here. */
    private Step queueDelta(CoalescedInterval ci, boolean replay, SourceState.Event after, LongConsumer then) {
        List<ResidenceRecord> records = core.fault == SourceCore.Fault.DROP_DELETE_IN_COALESCING
                ? ci.records().stream().filter(r -> !r.isDelete()).toList() : ci.records();
        UnnumberedFrame f = SourceFrameEncoder.delta(core.open().sessionId(), ci.interval(), records);
        SourceCounters m = core.peer.metrics();
        return queue(f, after, n -> {
            m.originalMutations.add(ci.interval().length());
            m.coalescedRecords.add(records.size());
            if (replay) {
                m.snapshotReplayBytes.add(f.encodedBytes());
            } else {
                core.emit(new SourceCore.Effect.Reached(CrashPoints.Point.DELTA_SENT));
            }
            then.accept(n);
        });
    }

    // ---------------------------------------------------------------- snapshot (SNAP-1..SNAP-5)

    private Step snapshotStep() {
        if (snap == null) {
            return beginAttempt();
        }
        Snap s = snap;
        if (s.end == null) {
            return switch (s.scan.nextPage()) {
                case SnapshotScan.ScanStep.Page p -> {
                    UnnumberedFrame f = SourceFrameEncoder.page(core.open().sessionId(), s.viewId, p.ordinal(), p.records());
                    yield queue(f, null, n -> {
                        s.last = n;
                        core.peer.metrics().snapshotPageBytes.add(f.encodedBytes());
                        s.transcript.page(n, p.ordinal(), p.records());
                        core.emit(new SourceCore.Effect.Reached(CrashPoints.Point.SNAPSHOT_PAGE_SENT));
                    });
                }
                case SnapshotScan.ScanStep.ScanEnd e -> {
                    s.end = e;
                    yield MOVED;
                }
                case SnapshotScan.ScanStep.Aborted a -> aborted(a.detail());
            };
        }
        if (!s.replay.isEmpty()) {
            CoalescedInterval ci = s.replay.poll();
            return queueDelta(ci, true, null, n -> {
                s.last = n;
                s.transcript.replay(n, ci.interval(), core.fault == SourceCore.Fault.DROP_DELETE_IN_COALESCING
                        ? ci.records().stream().filter(r -> !r.isDelete()).toList() : ci.records());
            });
        }
        if (s.replayComplete) {
            return commit(s);
        }
        return switch (s.scan.nextReplay(core.peer.config().replayIntervalsPerRead())) {
            case SnapshotScan.ReplayStep.Replay r -> {
                s.replay.addAll(r.intervals());
                s.replayComplete = r.complete();
                yield MOVED;
            }
            case SnapshotScan.ReplayStep.Aborted a when a.cause() == SnapshotScan.SnapshotAbortCause.RECORD_TOO_LARGE ->
                    new Step.Failed(new Refusal(ErrorCause.FRAME_TOO_LARGE, a.detail())); // retrying cannot help (DELTA-3)
            case SnapshotScan.ReplayStep.Aborted a -> aborted(a.detail());
        };
    }

    private Step beginAttempt() {
        snapshotAttempts++;
        ScopeDigest scopeDigest = core.open().scope().digest();
        Snap s = new Snap(core.peer.source().openSnapshot(core.open().scope()), core.peer.viewIds().get());
        snap = s;
        long s0 = s.scan.s0();
        return queue(control(SourceFrame.newBuilder().setSnapshotBegin(SnapshotBegin.newBuilder().setViewId(s.wireView)
                .setS0(s0).setScopeDigest(ByteString.copyFrom(scopeDigest.bytes())))), null, n -> {
                    s.begin = n;
                    s.last = n;
                    s.transcript.begin(n, s.viewId, scopeDigest, s0);
                });
    }

    private Step commit(Snap s) {
        core.host.committed(s.viewId); // before the commit frame: a requester may resume it as soon as it installs (SNAP-8)
        SnapshotScan.ScanStep.ScanEnd end = s.end;
        return queue(control(SourceFrame.newBuilder().setSnapshotCommit(SnapshotCommit.newBuilder().setViewId(s.wireView)
                .setS1(end.s1()).setPageCount(end.pageCount()).setFirstFrame(s.begin).setLastFrame(s.last)
                .setMaxScannedSequence(end.maxScannedSequence())
                .setTranscriptDigest(ByteString.copyFrom(s.transcript.finish().bytes())))),
                new SourceState.Committed(new Position(s.viewId, end.s1())), n -> {
                    snap = null;
                    window = core.peer.source().openWindow(() -> core.nowNanos);
                    backoffAttempt = 0;
                });
    }

    /** SNAP-4: a needed interval was trimmed; retry from a new S0 after a jittered, doubling backoff. */
    private Step aborted(String detail) {
        snapshotAborts++;
        snap = null;
        core.peer.metrics().rejections.inc(ErrorCause.SNAPSHOT_ABORTED_TRIMMED);
        RetryBackoff b = core.peer.config().snapshotRetryBackoff();
        long d = b.scheduledDelayMs(backoffAttempt);
        if (d < b.maxMs()) {
            backoffAttempt++;
        }
        long delayMs = d / 2 + core.peer.random().nextLong(d / 2 + 1); // equal jitter
        pauseUntil = core.nowNanos + delayMs * 1_000_000L;
        return MOVED;
    }

    // ---------------------------------------------------------------- streaming (DELTA-1..DELTA-3, DELTA-10, DELTA-14, PUB-4)

    private Step streamStep(SourceState.Streaming at) {
        if (core.fault == SourceCore.Fault.PRIORITY_SKIPS_OMITTED && deltas.size() > 1
                && core.sendPriority() == SendPriority.BARRIER) { // the seeded bug: the watermark jumps (ROUTE-10)
            CoalescedInterval first = deltas.peekFirst();
            CoalescedInterval last = deltas.peekLast();
            deltas.clear();
            CoalescedInterval jumped = new CoalescedInterval(new orbitkv.inventory.Interval(first.interval().from(),
                    last.interval().to()), last.records());
            return queueDelta(jumped, false, new SourceState.Advanced(jumped.interval()), n -> { });
        }
        if (!deltas.isEmpty()) { // the rest of one read goes out before the mailbox is looked at
            CoalescedInterval ci = deltas.poll();
            return queueDelta(ci, false, new SourceState.Advanced(ci.interval()), n -> { });
        }
        if (core.regenerate != null) {
            SourceState.Event e = SourceState.onRegenerationRequest(at, core.regenerate, core.peer.source().oldestRetainedSequence());
            core.regenerate = null;
            core.apply(e);
            if (e instanceof SourceState.Rebootstrap) {
                backoffAttempt = 0;
            }
            window = core.peer.source().openWindow(() -> core.nowNanos);
            return MOVED;
        }
        long ft = core.flushTarget;
        core.flushTarget = 0;
        long cursor = at.at().cursor();
        long head = core.peer.source().headSequence();
        if (ft > 0) {
            window.flushThrough(Math.min(ft, head));
            if (ft > head) {
                core.flushTarget = Math.max(core.flushTarget, ft); // the rest once appended
            }
        }
        if (head > cursor) {
            window.observe(cursor, head);
        }
        return switch (window.decide(cursor)) {
            case CoalescingWindow.Decision.ReadNow now -> read(cursor, head);
            case CoalescingWindow.Decision.WaitUntil w -> {
                waitUntil = w.deadlineMonoNanos();
                yield BLOCKED;
            }
            // unread journal is never left waiting for another append
            case CoalescingWindow.Decision.Idle idle -> head > cursor ? read(cursor, head) : awaitAppend(cursor);
        };
    }

    private Step read(long cursor, long head) {
        ReadOutcome outcome = core.peer.source().read(cursor, core.open().scope(), core.peer.config().replayIntervalsPerRead());
        // The window closes only if this read reaches the observed head; a read bounded by
        // replayIntervalsPerRead leaves it open so the rest is read without waiting for a new append.
        window.readStarted(cursor, outcome instanceof ReadOutcome.Intervals iv ? iv.endCursor(cursor) : head);
        return switch (outcome) {
            case ReadOutcome.Intervals iv -> {
                deltas.addAll(iv.intervals());
                yield MOVED;
            }
            case ReadOutcome.Trimmed t -> rebootstrap(); // DELTA-10: history gone, a new snapshot (BND-4)
            case ReadOutcome.BeyondHead b -> rebootstrap();
            case ReadOutcome.RecordTooLarge big -> new Step.Failed(new Refusal(ErrorCause.FRAME_TOO_LARGE, "record " + big.sequence()
                    + " is " + big.bytes() + " bytes alone; " + big.bound() + " is " + big.boundBytes()));
        };
    }

    private Step rebootstrap() {
        core.apply(new SourceState.Rebootstrap());
        backoffAttempt = 0;
        return MOVED;
    }

    /** Idle: arm the journal's broadcast wake-up (DELTA-14); liveness stays due on the core's deadline. */
    private Step awaitAppend(long cursor) {
        return switch (core.peer.source().armWakeAbove(cursor, core.host.appendWake())) {
            case AwaitOutcome.Advanced a -> MOVED; // appended meanwhile: read at once
            case AwaitOutcome.Armed a -> {
                armed = true;
                yield BLOCKED;
            }
            case AwaitOutcome.WaitersExhausted w -> { // poll (INV-9)
                pollAt = core.nowNanos + core.peer.config().ackIntervalMs() * 1_000_000L;
                yield BLOCKED;
            }
        };
    }

    private void disarm() {
        if (armed) {
            armed = false;
            core.peer.source().disarmWake(core.host.appendWake());
        }
    }
}
