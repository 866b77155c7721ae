package orbitkv.inventory.session;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import orbitkv.inventory.PeerIdentity;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.codec.EncodedFrame;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.membership.CrashPoints;
import orbitkv.membership.Incarnation;
import orbitkv.membership.ProtocolClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC shell of the source end of one directed session (issue 38): it moves frames, wake-ups and timer events
 * between gRPC and the sans-I/O {@link SourceCore}, which holds every protocol decision (the Open check, the receive
 * checks, credit, the mailbox, the snapshot and delta pump, liveness, close-with-error).
 *
 * <p>Threads: the gRPC inbound thread steps the core with each received message; one virtual thread steps its
 * pump whenever the session's one {@link WakeSignal} is raised (returned credit, a request, a journal append,
 * DELTA-14) or the core's deadline passes; any thread may close the session (the server on membership, fencing,
 * replacement or shutdown). Every step and the effects it hands out run under the core's monitor, so a frame, its
 * number and the state change it causes are one step, and frames leave in the order the core decided them. A pump
 * step does a bounded amount of work ({@link SourcePump#STEPS_MAX}), so an ACK waits at most that long (SES-3).
 */
final class SourceSession implements StreamObserver<Inbound<RequesterFrame>>, SourceCore.Host {
    private static final Logger LOG = LoggerFactory.getLogger(SourceSession.class);

    private final SessionServer server;
    private final ServerCallStreamObserver<EncodedFrame> out;
    /** The session's time and timers (issue 25): the server's clock, never the host clock read directly. */
    private final ProtocolClock clock;
    private final WakeSignal wake;
    /** The pump's wake-up as armed on the journal's broadcast signal; one instance, so re-arming keeps one slot. */
    private final Runnable appendWake;
    /** Every step and its effects run under this monitor. */
    private final SourceCore core;
    /** Guarded by {@link #core}: the pump thread was started. */
    private boolean pumpStarted;

    SourceSession(SessionServer server, ServerCallStreamObserver<EncodedFrame> out) {
        this.server = server;
        this.out = out;
        this.clock = server.clock();
        this.wake = new WakeSignal(clock);
        this.appendWake = wake::raise;
        this.core = new SourceCore(new SourceCore.Peer(server.cluster(), server.self(), server.config(), server.source(),
                server.counters(), server::membership, PeerIdentity.current(), // the call's context: created in startCall
                UUID::randomUUID, new SplittableRandom()), this);
        out.setOnCancelHandler(() -> closeQuietly("cancelled by the requester's transport"));
    }

    Incarnation requester() {
        return core.requester();
    }

    SourceSessionStatus status() {
        return core.status();
    }

    // ---------------------------------------------------------------- Host (called within a core step)

    @Override
    public ErrorCause stoppedCause() {
        return server.stoppedCause();
    }

    @Override
    public ErrorCause admit() {
        return server.admit(this);
    }

    @Override
    public void removed() {
        server.removed(this);
    }

    @Override
    public boolean isCommittedView(UUID viewId) {
        return server.isCommittedView(viewId);
    }

    @Override
    public void committed(UUID viewId) {
        server.committed(viewId);
    }

    @Override
    public Runnable appendWake() {
        return appendWake;
    }

    // ---------------------------------------------------------------- inbound (gRPC thread)

    @Override
    public void onNext(Inbound<RequesterFrame> in) {
        synchronized (core) {
            perform(core.onFrame(clock.nanoTime(), in));
            if (core.pumping()) { // a FlushThrough raises a session already waiting for a step (ROUTE-10)
                server.sendGate().reclass(this, core.sendPriority());
            }
            if (core.pumping() && !pumpStarted) {
                pumpStarted = true;
                Thread.ofVirtual().name("inventory-session-source-" + core.requester().nodeId()).start(this::runPump);
            }
        }
    }

    @Override
    public void onError(Throwable t) {
        closeQuietly("transport error: " + t);
    }

    @Override
    public void onCompleted() {
        closeQuietly("requester half-closed");
    }

    /** Sends {@code Error(cause)} and ends the stream; the session is closed (counted by cause). */
    void fail(ErrorCause cause, String detail) {
        synchronized (core) {
            perform(core.fail(cause, detail));
        }
        LOG.debug("session {} closed: {} {}", core.requester() == null ? "(unopened)" : core.requester(), cause, detail);
        wake.raise(); // the pump sees the end at its next look
    }

    void closeQuietly(String reason) {
        synchronized (core) {
            perform(core.closeQuietly(reason));
        }
        wake.raise();
    }

    /** Under {@link #core}: carries out a step's effects in order. */
    private void perform(List<SourceCore.Effect> effects) {
        boolean broken = false;
        for (SourceCore.Effect e : effects) {
            try {
                switch (e) {
                    case SourceCore.Effect.Send s -> out.onNext(s.frame());
                    case SourceCore.Effect.Complete c -> out.onCompleted();
                    case SourceCore.Effect.Wake w -> wake.raise();
                    case SourceCore.Effect.Reached r -> CrashPoints.reach(r.point()); // off unless -Dorbitkv.crashpoints (issue 17)
                }
            } catch (RuntimeException ex) { // the transport already ended: the peer learns it from the stream end
                LOG.debug("stream already ended: {}", ex.toString());
                broken = true;
            }
        }
        if (broken) {
            perform(core.closeQuietly("the transport refused a frame"));
        }
    }

    // ---------------------------------------------------------------- the pump (one virtual thread)

    /**
     * Each step runs under the source's {@link SendGate} (ROUTE-10): it waits for a permit at the session's class and
     * ends early when a session of a higher class waits; a refused request (the bounded send queue is full) waits
     * for the next wake-up or deadline and asks again.
     */
    private void runPump() {
        SendGate<SourceSession> gate = server.sendGate();
        try {
            while (true) {
                SendPriority p;
                synchronized (core) {
                    if (!core.pumping()) {
                        return;
                    }
                    p = core.sendPriority();
                }
                long deadline = gate.acquire(this, p) ? step(gate)
                        : clock.nanoTime() + server.config().ackIntervalMs() * 1_000_000L; // refused: ask again soon
                if (deadline == Long.MIN_VALUE) {
                    return;
                }
                long left = deadline - clock.nanoTime();
                if (left > 0) {
                    wake.await(left);
                }
            }
        } catch (InterruptedException e) { // nothing in this package interrupts the pump; treat it as shutdown
            fail(ErrorCause.SHUTTING_DOWN, "session pump interrupted");
        }
    }

    /** One pump step holding a permit; the core's next deadline, or {@code Long.MIN_VALUE} once the session ended. */
    private long step(SendGate<SourceSession> gate) {
        try {
            synchronized (core) {
                if (!core.pumping()) {
                    return Long.MIN_VALUE;
                }
                perform(core.pump(clock.nanoTime(), () -> gate.shouldYield(this)));
                return core.deadlineNanos();
            }
        } finally {
            gate.release(this);
        }
    }
}
