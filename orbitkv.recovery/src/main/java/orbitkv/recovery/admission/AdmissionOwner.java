package orbitkv.recovery.admission;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.AdmissionPolicy;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.CreditRefusal;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;

/**
 * The {@link NodeAdmission} implementation: one monitor guards every lane, submitter, lease and queued request;
 * every operation is bounded by the policy's bounds (lanes, pending, submitters, leases). See the interface for the
 * contract (ROUTE-11).
 */
public final class AdmissionOwner implements NodeAdmission {
    private final AdmissionPolicy policy;
    private final LongSupplier clock;
    private final Map<NicLane, Lane> lanes = new TreeMap<>(
            Comparator.comparing(NicLane::nic).thenComparing(NicLane::direction));
    private final Map<Long, Entries.Submitter> submitters = new HashMap<>();
    private final Map<Long, Entries.Lease> leases = new LinkedHashMap<>();
    /** Unexpired leases in expiry order (one TTL for all, so grant order). */
    private final ArrayDeque<Entries.Lease> expiry = new ArrayDeque<>();
    private final Map<String, Long> instanceCharged = new HashMap<>();
    private final Map<SubmitterKind, Long> kindCharged = new EnumMap<>(SubmitterKind.class);
    private final Map<CreditRefusal, Long> refusals = new EnumMap<>(CreditRefusal.class);
    /** Queued requests ended outside {@link #advance()} (loss, termination), answered by the next advance. */
    private final List<AdmissionOutcome> ended = new ArrayList<>();
    private long nextId = 1;
    private int pendingCount;
    private long expiredLeases;

    public AdmissionOwner(AdmissionPolicy policy, LongSupplier clock) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.clock = Objects.requireNonNull(clock, "clock");
        long now = clock.getAsLong();
        policy.lanes().forEach((id, limits) -> lanes.put(id, new Lane(id, limits, policy.leaseBatchBytesMax(), now)));
        for (SubmitterKind k : SubmitterKind.values()) {
            kindCharged.put(k, 0L);
        }
    }

    @Override
    public AdmissionPolicy policy() {
        return policy;
    }

    @Override
    public synchronized AdmissionOutcome register(SubmitterKind kind, String instance) {
        Objects.requireNonNull(kind, "kind");
        if (instance == null || instance.isEmpty() || instance.length() > 128 || !instance.matches("[\\x21-\\x7e]+")) {
            throw new IllegalArgumentException("instance must be 1..128 printable ASCII characters, got '" + instance
                    + "'");
        }
        if (submitters.size() >= policy.submittersMax()) {
            return refuse(CreditRefusal.SUBMITTERS_FULL, 0, submitters.size() + " submitters registered of "
                    + policy.submittersMax());
        }
        long id = nextId++;
        submitters.put(id, new Entries.Submitter(id, kind, instance));
        return new AdmissionOutcome.Registered(id);
    }

    @Override
    public synchronized AdmissionOutcome lease(long submitter, NicLane laneId, LeaseRequest request) {
        Entries.Submitter s = submitter(submitter);
        Lane lane = lanes.get(Objects.requireNonNull(laneId, "lane"));
        if (lane == null) {
            throw new IllegalArgumentException("lane " + laneId + " is not admitted; admitted: " + lanes.keySet());
        }
        if (request.bytes() > policy.leaseBatchBytesMax()) {
            throw new IllegalArgumentException("lease of " + request.bytes()
                    + " bytes exceeds the lease batch of " + policy.leaseBatchBytesMax() + " bytes");
        }
        long now = clock.getAsLong();
        if (s.lost) {
            return refuse(CreditRefusal.SUBMITTER_LOST, 0, "submitter " + submitter + " was declared lost");
        }
        if (!lane.pending.isEmpty()) {
            if (!request.mayWait()) {
                return refuse(CreditRefusal.QUEUED_AHEAD, 0, lane.pending.size() + " requests queued on " + laneId);
            }
        } else {
            CreditRefusal why = blocker(lane, request.bytes(), now);
            if (why == null) {
                return grant(s, lane, request.bytes(), 0, now);
            }
            if (!request.mayWait()) {
                return refuse(why, 0, detail(why, lane, request.bytes()));
            }
        }
        if (request.deadlineNanos() - now <= 0) {
            return refuse(CreditRefusal.DEADLINE_PASSED, 0, "deadline already passed");
        }
        if (pendingCount >= policy.pendingMax()) {
            return refuse(CreditRefusal.QUEUE_FULL, 0, pendingCount + " requests queued of " + policy.pendingMax());
        }
        long ticket = nextId++;
        lane.pending.add(new Entries.Pending(ticket, s, lane, request.bytes(), request.deadlineNanos(),
                request.remainingWorkBytes(), now));
        pendingCount++;
        return new AdmissionOutcome.Queued(ticket);
    }

    @Override
    public synchronized java.util.Optional<AdmissionOutcome.Refused> room(NicLane laneId, long bytes) {
        Lane lane = lanes.get(Objects.requireNonNull(laneId, "lane"));
        if (lane == null) {
            throw new IllegalArgumentException("lane " + laneId + " is not admitted; admitted: " + lanes.keySet());
        }
        if (bytes < 1) {
            throw new IllegalArgumentException("room for " + bytes + " bytes");
        }
        return lane.fits(bytes) ? java.util.Optional.empty()
                : java.util.Optional.of(refuse(CreditRefusal.WINDOW_FULL, 0, detail(CreditRefusal.WINDOW_FULL, lane, bytes)));
    }

    /** Why {@code bytes} cannot be granted on {@code lane} now, or null. */
    private CreditRefusal blocker(Lane lane, long bytes, long now) {
        if (leases.size() >= policy.leasesMax()) {
            return CreditRefusal.LEASES_FULL;
        }
        if (!lane.fits(bytes)) {
            return CreditRefusal.WINDOW_FULL;
        }
        return lane.paced(bytes, now) ? CreditRefusal.PACED : null;
    }

    private String detail(CreditRefusal why, Lane lane, long bytes) {
        return switch (why) {
            case LEASES_FULL -> leases.size() + " leases outstanding of " + policy.leasesMax();
            case WINDOW_FULL -> bytes + " bytes do not fit beside the " + lane.charged + " charged of the "
                    + lane.usable + " usable on " + lane.id + " (" + lane.quarantined + " quarantined)";
            case PACED -> bytes + " bytes exceed the pacer's tokens on " + lane.id + " at "
                    + lane.rate + " bytes/s";
            default -> why.wireName();
        };
    }

    private AdmissionOutcome.Granted grant(Entries.Submitter s, Lane lane, long bytes, long ticket, long now) {
        long id = nextId++;
        Entries.Lease l = new Entries.Lease(id, s, lane, bytes, now + policy.leaseTtlNanos());
        lane.charge(bytes, now);
        leases.put(id, l);
        expiry.addLast(l);
        s.leases.add(id);
        instanceCharged.merge(s.instance, bytes, Long::sum);
        kindCharged.merge(s.kind, bytes, Long::sum);
        return new AdmissionOutcome.Granted(id, ticket, lane.id, bytes, l.expiresAt);
    }

    @Override
    public synchronized AdmissionOutcome returnBytes(long submitter, long lease, long bytes, ReturnEvidence evidence) {
        Objects.requireNonNull(evidence, "evidence");
        Entries.Lease l = leases.get(lease);
        if (l == null) {
            throw new IllegalArgumentException("lease " + lease + " is not outstanding");
        }
        if (l.submitter.id != submitter) {
            throw new IllegalArgumentException("lease " + lease + " belongs to another submitter");
        }
        if (bytes < 1 || bytes > l.outstanding) {
            throw new IllegalArgumentException("return of " + bytes + " bytes; lease " + lease + " has "
                    + l.outstanding + " outstanding");
        }
        long now = clock.getAsLong();
        if (evidence == ReturnEvidence.NEVER_SUBMITTED && (l.expired(now) || l.submitter.lost)) {
            return refuse(CreditRefusal.UNSPENT_RETURN_UNTRUSTED, 0, "lease " + lease
                    + (l.submitter.lost ? " belongs to a lost submitter" : " expired")
                    + ": its bytes stay charged until transport progress or termination evidence");
        }
        discharge(l, bytes);
        return new AdmissionOutcome.Returned(lease, bytes, l.outstanding);
    }

    private void discharge(Entries.Lease l, long bytes) {
        l.outstanding -= bytes;
        l.lane.discharge(bytes, l.quarantined);
        instanceCharged.compute(l.submitter.instance, (k, v) -> v == bytes ? null : v - bytes);
        kindCharged.merge(l.submitter.kind, -bytes, Long::sum);
        if (l.outstanding == 0) {
            leases.remove(l.id);
            l.submitter.leases.remove(l.id);
        }
    }

    @Override
    public synchronized boolean cancel(long ticket) {
        for (Lane lane : lanes.values()) {
            if (lane.pending.removeIf(p -> p.ticket() == ticket)) {
                pendingCount--;
                return true;
            }
        }
        return false;
    }

    @Override
    public synchronized void lost(long submitter) {
        Entries.Submitter s = submitter(submitter);
        if (s.lost) {
            return;
        }
        s.lost = true;
        for (long id : s.leases) {
            quarantine(leases.get(id));
        }
        endPending(s);
    }

    @Override
    public synchronized long terminated(long submitter) {
        Entries.Submitter s = submitter(submitter);
        long returned = 0;
        for (long id : List.copyOf(s.leases)) {
            Entries.Lease l = leases.get(id);
            returned += l.outstanding;
            discharge(l, l.outstanding);
        }
        endPending(s);
        submitters.remove(submitter);
        return returned;
    }

    private void quarantine(Entries.Lease l) {
        if (!l.quarantined) {
            l.quarantined = true;
            l.lane.quarantined += l.outstanding;
        }
    }

    private void endPending(Entries.Submitter s) {
        for (Lane lane : lanes.values()) {
            for (Iterator<Entries.Pending> it = lane.pending.iterator(); it.hasNext();) {
                Entries.Pending p = it.next();
                if (p.submitter() == s) {
                    it.remove();
                    pendingCount--;
                    ended.add(refuse(CreditRefusal.SUBMITTER_LOST, p.ticket(), "submitter " + s.id
                            + " lost or terminated while queued"));
                }
            }
        }
    }

    @Override
    public synchronized List<AdmissionOutcome> advance() {
        long now = clock.getAsLong();
        while (!expiry.isEmpty() && expiry.peekFirst().expired(now)) {
            Entries.Lease l = expiry.pollFirst();
            if (leases.containsKey(l.id)) {
                expiredLeases++;
                quarantine(l);
            }
        }
        List<AdmissionOutcome> out = new ArrayList<>(ended);
        ended.clear();
        for (Lane lane : lanes.values()) {
            for (Iterator<Entries.Pending> it = lane.pending.iterator(); it.hasNext();) {
                Entries.Pending p = it.next();
                if (p.deadline() - now <= 0) {
                    it.remove();
                    pendingCount--;
                    out.add(refuse(CreditRefusal.DEADLINE_PASSED, p.ticket(), "deadline passed after "
                            + (now - p.arrival()) / 1_000_000 + " ms queued on " + lane.id));
                }
            }
            serve(lane, now, out);
        }
        return out;
    }

    /** Grants the lane's best requests while they fit: the best is never overtaken. */
    private void serve(Lane lane, long now, List<AdmissionOutcome> out) {
        while (!lane.pending.isEmpty()) {
            Entries.Pending best = Scheduling.best(lane.pending, now, policy.agingNanos(), instanceCharged);
            if (blocker(lane, best.bytes(), now) != null) {
                return;
            }
            lane.pending.remove(best);
            pendingCount--;
            out.add(grant(best.submitter(), lane, best.bytes(), best.ticket(), now));
        }
    }

    @Override
    public synchronized long nextPacerNanos() {
        long now = clock.getAsLong();
        long next = -1;
        for (Lane lane : lanes.values()) {
            if (lane.pending.isEmpty() || lane.rate == 0) {
                continue;
            }
            Entries.Pending best = Scheduling.best(lane.pending, now, policy.agingNanos(), instanceCharged);
            if (lane.fits(best.bytes())) {
                long at = lane.tokensAt(best.bytes(), now);
                next = next < 0 ? at : Math.min(next, at);
            }
        }
        return next;
    }

    @Override
    public synchronized AdmissionStatus status() {
        int lost = (int) submitters.values().stream().filter(s -> s.lost).count();
        return new AdmissionStatus(lanes.values().stream().map(Lane::status).toList(), kindCharged, refusals,
                submitters.size(), lost, leases.size(), pendingCount, expiredLeases);
    }

    private Entries.Submitter submitter(long id) {
        Entries.Submitter s = submitters.get(id);
        if (s == null) {
            throw new IllegalArgumentException("submitter " + id + " is not registered");
        }
        return s;
    }

    private AdmissionOutcome.Refused refuse(CreditRefusal why, long ticket, String detail) {
        refusals.merge(why, 1L, Long::sum);
        return new AdmissionOutcome.Refused(why, ticket, why.wireName() + ": " + detail);
    }
}
