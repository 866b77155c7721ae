package orbitkv.recovery.exec;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.Prediction;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.Restore;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteOutcome;
import orbitkv.recovery.RouteSource;
import orbitkv.recovery.RouteTrace;
import orbitkv.recovery.TracedRoute;
import orbitkv.recovery.TransferPorts;
import orbitkv.recovery.plan.Exclusions;
import orbitkv.recovery.plan.RouteText;

/**
 * One restore (ROUTE-7, ROUTE-8, ROUTE-10, ROUTE-11): plan, then routes in demand order with at most one READ in
 * flight and one next route admitted meanwhile; a pre-submission refusal becomes request-local evidence and, within
 * the replan budget and the original deadline, a replan from the refused route's first key; a submitted route is
 * awaited to terminal evidence and never followed by a second route into its keys; a payload failure, a timeout or an
 * interrupt ends the prefix. The delivered prefix is always contiguous from the first demanded key.
 */
public final class RestoreRun<D> {
    private final ExecutionContext ctx;
    private final Demand demand;
    private final Evidence evidence;
    private final TransferPorts<D> ports;
    private final long traceId;
    private final Exclusions exclusions = new Exclusions();
    private final List<Restore.Delivered<D>> delivered = new ArrayList<>();
    private final List<RouteRun<D>> submitted = new ArrayList<>();
    private final List<TracedRoute> traced = new ArrayList<>();
    private final List<AdmissionRefusal> replans = new ArrayList<>();
    private int tracedOmitted;
    private long start;
    private long lastReady;
    private long bytesDelivered;
    private int restored;
    private boolean deadlineHit;

    public RestoreRun(ExecutionContext ctx, Demand demand, Evidence evidence, TransferPorts<D> ports, long traceId) {
        this.ctx = ctx;
        this.demand = demand;
        this.evidence = evidence;
        this.ports = ports;
        this.traceId = traceId;
    }

    public Restore<D> run() {
        start = ctx.clock().getAsLong();
        lastReady = start;
        Plan first = plan(0);
        ctx.counters().decision(first.decision().reason());
        Deque<Route> queue = new ArrayDeque<>(first.routes());
        PrefixStop stop = first.stop();
        RouteRun<D> pending = admitNext(queue);
        while (true) {
            if (pending == null) {
                if (deadlineHit) {
                    stop = PrefixStop.DEADLINE;
                }
                break;
            }
            if (pending.state() == RunState.REFUSED) {
                refused(pending);
                if (replans.size() >= ctx.policy().replansMax()) {
                    stop = PrefixStop.REPLANS_EXHAUSTED;
                    break;
                }
                if (deadlinePassed()) {
                    stop = PrefixStop.DEADLINE;
                    break;
                }
                replans.add(pending.refusal());
                ctx.counters().replan(pending.refusal());
                Plan p = plan(pending.route().fromIndex());
                queue = new ArrayDeque<>(p.routes());
                stop = p.stop();
                pending = admitNext(queue);
                continue;
            }
            RouteRun<D> current = pending;
            ctx.counters().drainPending.incrementAndGet(); // decremented by the drain event, whenever it comes
            current.submit();
            submitted.add(current);
            ctx.counters().executed(current.route().kind());
            pending = admitNext(queue); // the one next authorization, overlapping the READ in flight
            RunState out = current.await(demand.deadlineNanos());
            record(current);
            if (out == RunState.READY) {
                delivered.add(new Restore.Delivered<>(current.route(), current.destination()));
                restored = current.route().toIndex();
                bytesDelivered += current.route().bytes();
                lastReady = current.readyNanos();
                ctx.counters().ready(current.route().kind(), current.route().bytes());
                continue;
            }
            end(pending);
            stop = switch (out) {
                case PAYLOAD_FAILED -> {
                    ctx.counters().payloadFailure(current.route().kind());
                    yield PrefixStop.PAYLOAD_FAILURE;
                }
                case TIMED_OUT -> {
                    ctx.counters().timedOut(current.route().kind());
                    yield PrefixStop.DEADLINE;
                }
                default -> PrefixStop.CANCELLED;
            };
            break;
        }
        ctx.counters().stop(stop);
        ctx.counters().restores.increment();
        return new Restore<>(delivered, restored, stop, trace(first, stop));
    }

    private Plan plan(int from) {
        return ctx.planner().plan(demand, evidence, from, bytesDelivered, exclusions, ctx.costs()::estimate);
    }

    private boolean deadlinePassed() {
        return ctx.clock().getAsLong() - demand.deadlineNanos() >= 0;
    }

    /** Admits the next queued route, or returns null (queue empty, or the deadline passed: no admission after it). */
    private RouteRun<D> admitNext(Deque<Route> queue) {
        if (queue.isEmpty()) {
            return null;
        }
        if (deadlinePassed()) {
            deadlineHit = true;
            return null;
        }
        RouteRun<D> run = new RouteRun<>(queue.poll(), ports, ctx.clock(), () -> ctx.counters().drainPending.decrementAndGet());
        run.admit(demand.deadlineNanos());
        return run;
    }

    /** A refusal: counted, kept as request-local evidence, traced; a path refusal also stays in the cost evidence. */
    private void refused(RouteRun<D> run) {
        ctx.counters().refused(run.route().kind(), run.refusal());
        exclusions.add(run.route(), run.refusal(), run.refusedKeys());
        ExecutedObservation o = run.observation(run.admitStartNanos());
        if (o != null) {
            ctx.costs().record(o);
        }
        trace(run, RouteOutcome.REFUSED);
    }

    /** The admitted or refused next route of a request that ended: released (never submitted) and traced. */
    private void end(RouteRun<D> pending) {
        if (pending == null) {
            return;
        }
        if (pending.state() == RunState.REFUSED) {
            refused(pending);
        } else {
            pending.abandon();
            trace(pending, RouteOutcome.ABANDONED);
        }
    }

    /** The terminal run's observation into the shared model; the trace entry. */
    private void record(RouteRun<D> run) {
        ExecutedObservation o = run.observation(lastReady);
        if (o != null) {
            ctx.costs().record(o);
        }
        trace(run, switch (run.state()) {
            case READY -> RouteOutcome.READY;
            case PAYLOAD_FAILED -> RouteOutcome.PAYLOAD_FAILURE;
            case TIMED_OUT -> RouteOutcome.TIMED_OUT;
            default -> RouteOutcome.CANCELLED;
        });
    }

    private void trace(RouteRun<D> run, RouteOutcome outcome) {
        if (traced.size() == RouteTrace.ROUTES_MAX) {
            tracedOmitted++;
            return;
        }
        Route r = run.route();
        long ready = outcome == RouteOutcome.READY ? run.readyNanos() - start : -1;
        traced.add(new TracedRoute(r.kind(), RouteText.owner(r.source()), r.fromIndex(), r.toIndex(), r.bytes(), outcome,
                outcome == RouteOutcome.REFUSED ? Optional.of(run.refusal()) : Optional.empty(), ready));
    }

    private RouteTrace trace(Plan first, PrefixStop stop) {
        long now = ctx.clock().getAsLong();
        Optional<Prediction> predicted = first.decision().executed();
        OptionalLong evidenceAge = OptionalLong.empty();
        OptionalLong loadAge = OptionalLong.empty();
        for (Route r : first.routes()) {
            CostEstimate e = ctx.costs().estimate(r.routeClass());
            if (predicted.isPresent() && e != null) {
                long age = now - e.lastObservationNanos();
                evidenceAge = OptionalLong.of(Math.max(age, evidenceAge.orElse(0)));
            }
            if (r.source() instanceof RouteSource.Peer p) {
                Optional<orbitkv.recovery.LoadSummary.Aged> a = ctx.loads().apply(p.owner());
                if (a.isPresent() && (loadAge.isEmpty() || a.get().ageNanos() < loadAge.getAsLong())) {
                    loadAge = OptionalLong.of(a.get().ageNanos());
                }
            }
        }
        long readyNanos = restored > 0 ? lastReady - start : 0;
        OptionalLong error = predicted.isPresent() && replans.isEmpty() && restored == first.prefixEnd() && stop == first.stop()
                && restored > 0 ? OptionalLong.of(readyNanos - Math.round(predicted.get().meanNanos())) : OptionalLong.empty();
        int drainPending = 0;
        for (RouteRun<D> r : submitted) {
            if (!r.drained()) {
                drainPending++;
            }
        }
        return new RouteTrace(traceId, demand.keys().size(), demand.target().traceName(), demand.deadlineNanos() - start,
                demand.staleHintsAllowed(), evidence.coverage(), evidence.viewGeneration(), first.eligibleSources(),
                first.prefixEnd(), first.stop(), first.decision(), traced, tracedOmitted, replans, evidenceAge, error, loadAge,
                restored, stop, readyNanos, drainPending, laneNeed(first));
    }

    /** The demand's network constraint against the first plan's largest peer-route need (issue 39 item 6). */
    private Optional<RouteTrace.LaneNeed> laneNeed(Plan first) {
        if (demand.network().isEmpty()) {
            return Optional.empty();
        }
        orbitkv.recovery.LaneHeadroom h = demand.network().get();
        long need = -1;
        for (Route r : first.routes()) {
            if (r.source() instanceof RouteSource.Peer) {
                need = Math.max(need, h.needBytes(r));
            }
        }
        return need < 0 ? Optional.empty() : Optional.of(new RouteTrace.LaneNeed(h, need));
    }
}
