package orbitkv.server.restore;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The stage stamps of one restore, for {@link RestoreEvent}. {@link #begin} answers {@link #OFF} unless a recording
 * enabled the event; {@code OFF}'s methods read no clock and keep nothing, so a restore without a recording pays one
 * flag check. A stamp taken on a data-loop thread (a grant's answer, a route's readiness) is taken before the future
 * the restore's thread waits on completes, so that thread sees it; the stamps are guarded by this object's lock, since
 * routes of one restore may complete on different event loops ({@code OFF} takes no lock: it is shared).
 */
final class RestoreStages {
    /** A restore that no recording times. */
    static final RestoreStages OFF = new RestoreStages(null, 0);

    private final RestoreEvent event;
    private final long startNanos;
    private long evidencedNanos;
    private long firstPortNanos;
    private long creditsNanos;
    private int grants;
    private long grantWaitNanos;
    private long grantWakeNanos;
    private long readNanos;
    private long lastReadyNanos;
    private long plannerReturnedNanos;

    private RestoreStages(RestoreEvent event, long startNanos) {
        this.event = event;
        this.startNanos = startNanos;
    }

    /** A restore's stamps from now, or {@link #OFF} when no recording enables {@link RestoreEvent}. */
    static RestoreStages begin() {
        RestoreEvent e = new RestoreEvent();
        if (!e.isEnabled()) {
            return OFF;
        }
        e.begin();
        return new RestoreStages(e, System.nanoTime());
    }

    /** The clock now, or 0 when off (a start stamp for {@link #ready}). */
    long now() {
        return event == null ? 0 : System.nanoTime();
    }

    /** The request's evidence was looked up. */
    void evidenced() {
        if (event != null) {
            synchronized (this) {
                evidencedNanos = System.nanoTime();
            }
        }
    }

    /** The planner asks a route's credits now (the first ask ends the plan stage); the stamp for {@link #credited}. */
    long portCalled() {
        if (event == null) {
            return 0;
        }
        synchronized (this) {
            long now = System.nanoTime();
            firstPortNanos = firstPortNanos == 0 ? now : firstPortNanos;
            return now;
        }
    }

    /** A route's credits asked at {@code askedNanos} were answered now. */
    void credited(long askedNanos) {
        if (event != null) {
            synchronized (this) {
                creditsNanos += System.nanoTime() - askedNanos;
            }
        }
    }

    /** One Authorize asked now: {@link Grant#watch} its answer, then {@link Grant#resumed} on the restore's thread. */
    Grant grantAsked() {
        return event == null ? Grant.OFF : new Grant(this, System.nanoTime());
    }

    /** A peer route whose READs were submitted at {@code submittedNanos} is ready now (before its future completes). */
    void ready(long submittedNanos) {
        if (event != null) {
            synchronized (this) {
                long now = System.nanoTime();
                readNanos += now - submittedNanos;
                lastReadyNanos = Math.max(lastReadyNanos, now);
            }
        }
    }

    /** The planner returned its outcome to the restore. */
    void plannerReturned() {
        if (event != null) {
            synchronized (this) {
                plannerReturnedNanos = System.nanoTime();
            }
        }
    }

    /** The answer is assembled: commits the event with its stages. */
    void assembled(int routes, int keys, List<RouteHeader.Served> served) {
        if (event != null) {
            synchronized (this) {
                commit(routes, keys, served);
            }
        }
    }

    private void commit(int routes, int keys, List<RouteHeader.Served> served) {
        long end = System.nanoTime();
        if (!event.shouldCommit()) {
            return;
        }
        long payloadBytes = 0;
        for (RouteHeader.Served s : served) {
            payloadBytes += s.payloadBytes();
        }
        long evidenced = evidencedNanos == 0 ? startNanos : evidencedNanos;
        long planned = firstPortNanos == 0 ? plannerReturnedNanos : firstPortNanos;
        RestoreEvent e = event;
        e.routes = routes;
        e.peerGrants = grants;
        e.keys = keys;
        e.payloadBytes = payloadBytes;
        e.evidenceNanos = evidenced - startNanos;
        e.planNanos = planned - evidenced;
        e.creditsNanos = creditsNanos;
        e.grantWaitNanos = grantWaitNanos;
        e.grantWakeNanos = grantWakeNanos;
        e.readNanos = readNanos;
        e.afterReadyNanos = lastReadyNanos == 0 ? 0 : plannerReturnedNanos - lastReadyNanos;
        e.assembleNanos = end - plannerReturnedNanos;
        e.totalNanos = end - startNanos;
        e.otherNanos = e.totalNanos - e.evidenceNanos - e.planNanos - creditsNanos - grantWaitNanos - grantWakeNanos
                - readNanos - e.afterReadyNanos - e.assembleNanos;
        e.commit();
    }

    private synchronized void granted(long askedNanos, long answeredNanos, long resumedNanos) {
        grants++;
        grantWaitNanos += answeredNanos - askedNanos;
        grantWakeNanos += resumedNanos - answeredNanos;
    }

    /** One Authorize's stamps: asked, answered (on the completing thread), resumed (on the restore's thread). */
    static final class Grant {
        static final Grant OFF = new Grant(null, 0);

        private final RestoreStages stages;
        private final long askedNanos;
        private volatile long answeredNanos;

        private Grant(RestoreStages stages, long askedNanos) {
            this.stages = stages;
            this.askedNanos = askedNanos;
        }

        /** {@code answer}, stamped when it completes (the stamp precedes the returned future's completion). */
        <T> CompletableFuture<T> watch(CompletableFuture<T> answer) {
            return stages == null ? answer : answer.whenComplete((v, x) -> answeredNanos = System.nanoTime());
        }

        /** The restore's thread runs with the answer now. */
        void resumed() {
            if (stages != null) {
                stages.granted(askedNanos, answeredNanos, System.nanoTime());
            }
        }
    }
}
