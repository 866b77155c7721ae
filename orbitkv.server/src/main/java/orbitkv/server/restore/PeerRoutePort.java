package orbitkv.server.restore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Member;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.LoadSummary;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteSelection;
import orbitkv.recovery.RouteSource;
import orbitkv.recovery.TransferPorts;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.GrantRequest;
import orbitkv.transfer.Intent;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.SourceLoad;

/**
 * A peer route: one Authorize of exactly the route's blocks at their listed generations (INV-2: the source validates
 * the owner incarnation and each generation and pins). A partial grant is released at once and refused for the
 * refused keys (the replan reads the granted ones again, never half a route); a request-level refusal or failure
 * refuses the source for this request. A whole grant's blocks are READ by {@link PeerReads}.
 */
final class PeerRoutePort {
    /** Bound on waiting for an Authorize answer beyond its own timeout (the engine answers by then). */
    private static final long AUTHORIZE_SLACK_MS = 5_000;

    private final RestoreTransfer t;
    private final RouteSelection routes;
    private final RestoreNotes notes;
    private final BackendPolicy policy;
    private final LongSupplier remainingMs;
    private final RestoreStages stages;

    /** @param remainingMs milliseconds left until the request's deadline, never negative */
    PeerRoutePort(RestoreTransfer t, RouteSelection routes, RestoreNotes notes, BackendPolicy policy,
            LongSupplier remainingMs, RestoreStages stages) {
        this.t = t;
        this.routes = routes;
        this.notes = notes;
        this.policy = policy;
        this.remainingMs = remainingMs;
        this.stages = stages;
    }

    TransferPorts.GrantOutcome<RestoreRecords> authorize(Route route, RouteSource.Peer peer) {
        Optional<Member> member = t.member(peer.owner());
        if (member.isEmpty()) {
            return refused("source-not-admitted", List.of(), peer.owner() + " left the membership view");
        }
        List<BlockRef> refs = new ArrayList<>(route.blocks().size());
        for (RouteBlock b : route.blocks()) {
            refs.add(new BlockRef(b.key(), peer.medium(), b.sequence()));
        }
        long remaining = remainingMs.getAsLong();
        if (remaining <= 0) {
            return refused("deadline", List.of(), "deadline passed");
        }
        Duration timeout = Duration.ofMillis(Math.min(t.authorizeTimeoutMs(), remaining));
        AuthorizeOutcome outcome;
        RestoreStages.Grant timing = stages.grantAsked();
        try {
            CompletableFuture<AuthorizeOutcome> answer = t.engine().authorize(new GrantRequest(member.get(),
                    Intent.FOREGROUND, refs, timeout)).toCompletableFuture();
            outcome = timing.watch(answer).get(timeout.toMillis() + AUTHORIZE_SLACK_MS, TimeUnit.MILLISECONDS);
            timing.resumed();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return refused("cancelled", List.of(), "interrupted");
        } catch (Exception e) {
            return refused("unreachable", List.of(), String.valueOf(e));
        }
        outcome.load().ifPresent(this::recordLoad);
        return switch (outcome) {
            case AuthorizeOutcome.Refused r -> {
                notes.refusal(RouteHeader.name(r.reason()));
                yield new TransferPorts.GrantOutcome.Refused<>(admission(r.reason()), List.of(), r.detail());
            }
            case AuthorizeOutcome.Failed f -> refused(RouteHeader.name(f.failure()), List.of(), f.detail());
            case AuthorizeOutcome.NothingGranted n -> refusedBlocks(route, n.refusals());
            case AuthorizeOutcome.Granted g -> {
                List<BlockResult> blocks = g.grant().blocks();
                if (blocks.stream().allMatch(b -> b instanceof BlockResult.Granted)) {
                    yield new TransferPorts.GrantOutcome.Granted<>(new PeerReads(t, g.grant(), policy, notes,
                            remainingMs, stages));
                }
                t.engine().release(g.grant()); // nothing was READ: released at once
                yield refusedBlocks(route, blocks);
            }
        };
    }

    /** A refusal of the whole source for this request (unreachable), noted as {@code name}. */
    private TransferPorts.GrantOutcome<RestoreRecords> refused(String name, List<StateKey> keys, String detail) {
        notes.refusal(name);
        return new TransferPorts.GrantOutcome.Refused<>(AdmissionRefusal.UNREACHABLE, keys, detail);
    }

    /** The source's refusal in the planner's terms (scope: keys, or the whole source for this request). */
    static AdmissionRefusal admission(RefusalReason r) {
        return switch (r) {
            case STALE_GENERATION -> AdmissionRefusal.STALE_GENERATION;
            case NOT_RESIDENT, BLOCK_TOO_LARGE -> AdmissionRefusal.NOT_RESIDENT;
            case PINS_EXHAUSTED, PREFETCH_LIMIT -> AdmissionRefusal.PINS_EXHAUSTED;
            case SOURCE_FENCED, SHUTTING_DOWN, SOURCE_CLOSED, STALE_SOURCE_INCARNATION, WRONG_SOURCE_INCARNATION,
                    MEMBERSHIP_SUSPENDED -> AdmissionRefusal.SOURCE_FENCED;
            default -> AdmissionRefusal.UNREACHABLE;
        };
    }

    /**
     * Keeps the source's load summary as evidence (ROUTE-9): stamped with this Manager's receipt time by the route
     * selection, expired by receipt age, never a grant and never written to etcd.
     */
    private void recordLoad(SourceLoad l) {
        routes.recordLoad(new LoadSummary(l.measuredBy(), l.windowMs(), l.grantsOutstanding(), l.pinnedBytes(),
                l.egressQueuedBytes()));
    }

    /** The refused blocks of an answer, in request order, as one request-local refusal of those keys. */
    private TransferPorts.GrantOutcome<RestoreRecords> refusedBlocks(Route route, List<? extends BlockResult> results) {
        List<StateKey> keys = new ArrayList<>();
        RefusalReason first = null;
        for (BlockResult result : results) {
            if (result instanceof BlockResult.Refused r) {
                keys.add(r.ref().key());
                first = first == null ? r.reason() : first;
            }
        }
        RefusalReason reason = first == null ? RefusalReason.NOT_RESIDENT : first;
        notes.refusal(RouteHeader.name(reason));
        return new TransferPorts.GrantOutcome.Refused<>(admission(reason), keys, keys.size() + " of "
                + route.blocks().size() + " blocks refused: " + RouteHeader.name(reason));
    }
}
