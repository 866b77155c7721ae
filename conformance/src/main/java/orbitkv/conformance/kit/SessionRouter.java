package orbitkv.conformance.kit;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.peer.AdversarialSource;
import orbitkv.conformance.peer.Conversation;
import orbitkv.conformance.peer.WireFrames;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.Incarnation;

/**
 * Sessions arriving at the kit's listener, routed by their {@code Open}: only a session that the target
 * opens to the kit source of the current scenario reaches the scenario. Every other session (the target or
 * other cluster members dialling a kit requester member, or another member dialling the kit source) is
 * answered with {@code Error(SHUTTING_DOWN)}: kit members serve no inventory. At most
 * {@value #ROUTED_MAX} routed sessions wait unclaimed; beyond that a session is refused the same way.
 * A session to the current kit source from the target's node under another incarnation than the target's
 * (stale or invented) is refused the same way and fails the waiting row at once (SES-5, a normative failure
 * that fails a policy row too), instead of letting it wait out its bound.
 */
final class SessionRouter implements AutoCloseable {
    static final int ROUTED_MAX = 16;
    static final String REFUSAL = "conformance kit member: serves no inventory";

    /** A session the target opened to the current kit source, with its already-read first frame. */
    record Routed(AdversarialSource.ScriptedSession session, RequesterFrame open) {}

    private final AdversarialSource listener;
    private final Incarnation target;
    private final Duration firstFrameBound;
    private final BlockingQueue<Routed> routed = new ArrayBlockingQueue<>(ROUTED_MAX);
    private volatile Incarnation expectedSource;
    private volatile boolean closed;
    private final Thread acceptor;

    SessionRouter(AdversarialSource listener, Incarnation target, Duration firstFrameBound) {
        this.listener = listener;
        this.target = target;
        this.firstFrameBound = firstFrameBound;
        this.acceptor = Thread.ofVirtual().name("kit-session-router").start(this::acceptLoop);
    }

    /** From now on, sessions from the target to {@code source} are routed to the scenario; older ones are dropped. */
    void expect(Incarnation source) {
        expectedSource = source;
        Routed stale;
        while ((stale = routed.poll()) != null) {
            refuse(stale.session(), stale.open());
        }
    }

    /** The next session the target opened to the expected source, or an AssertionError after {@code bound}. */
    Routed next(Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            Routed r = routed.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (r == null) {
                throw new AssertionError("the target opened no session to the kit source " + expectedSource + " within "
                        + bound.toMillis() + " ms");
            }
            if (isExpected(r.open())) {
                return r;
            }
            refuse(r.session(), r.open());
            if (isFromTargetNode(r.open())) {
                throw new NormativeFailure("SES-5: the target opened a session to the kit source " + expectedSource
                        + " naming requester " + r.open().getOpen().getRequester().toString().replace('\n', ' ')
                        + ", not its own incarnation " + target);
            }
        }
    }

    private boolean isExpected(RequesterFrame f) {
        Incarnation source = expectedSource;
        return f.hasOpen() && source != null && WireFrames.ref(source).equals(f.getOpen().getSource())
                && WireFrames.ref(target).equals(f.getOpen().getRequester());
    }

    /**
     * An Open to the current kit source naming the target's node as requester, in any incarnation: the
     * target's own (routed), or another one (stale or invented: {@link #next} fails the row at once, SES-5).
     */
    private boolean isFromTargetNode(RequesterFrame f) {
        Incarnation source = expectedSource;
        return f.hasOpen() && source != null && WireFrames.ref(source).equals(f.getOpen().getSource())
                && f.getOpen().getRequester().getNodeId().equals(target.nodeId().value());
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                AdversarialSource.ScriptedSession s = listener.nextSession(Duration.ofMillis(200));
                if (s != null) {
                    Thread.ofVirtual().name("kit-session-open").start(() -> route(s));
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void route(AdversarialSource.ScriptedSession s) {
        try {
            Conversation.Received<RequesterFrame> first = s.next(firstFrameBound);
            if (!(first instanceof Conversation.Received.Frame<RequesterFrame> f)) {
                s.complete();
                return;
            }
            if (!isFromTargetNode(f.frame()) || !routed.offer(new Routed(s, f.frame()))) {
                refuse(s, f.frame());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            s.complete(); // unparseable first frame or a closed stream: nothing to answer
        }
    }

    private static void refuse(AdversarialSource.ScriptedSession s, RequesterFrame first) {
        try {
            s.send(SourceFrame.newBuilder().setSessionId(first.getOpen().getSessionId()).setFrameNumber(1)
                    .setError(orbitkv.inventory.wire.Error.newBuilder().setCause(ErrorCause.SHUTTING_DOWN).setDetail(REFUSAL))
                    .build());
        } catch (RuntimeException e) {
            // the other side already left
        }
        s.complete();
    }

    @Override
    public void close() {
        closed = true;
        try {
            acceptor.join(Duration.ofSeconds(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the caller's interrupt stays visible; the acceptor ends on its own
        }
    }
}
