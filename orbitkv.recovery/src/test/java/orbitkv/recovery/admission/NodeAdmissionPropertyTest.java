package orbitkv.recovery.admission;

import static orbitkv.recovery.admission.AdmissionFixture.ETH_RX;
import static orbitkv.recovery.admission.AdmissionFixture.ETH_TX;
import static orbitkv.recovery.admission.AdmissionFixture.LO_RX;
import static orbitkv.recovery.admission.AdmissionFixture.LO_TX;
import static orbitkv.recovery.admission.AdmissionFixture.TTL;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.CreditRefusal;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.NodeAdmission.LeaseRequest;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.recovery.fixtures.ManualClock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Seeded random operations against a model of leases (ROUTE-11): every lane's charge equals the model's outstanding
 * bytes and stays within the usable window; uncertain bytes (expired leases, lost submitters) only leave by transport
 * progress or termination; the pacer never grants more than its burst plus rate times elapsed time; every queued
 * ticket is answered at most once and never granted after its deadline. Replay: -Dorbitkv.seed=N.
 */
@Tag("unit")
class NodeAdmissionPropertyTest {
    private static final NicLane[] LANES = {LO_RX, LO_TX, ETH_RX, ETH_TX};
    private static final long PACE = 900; // eth usable bytes/s in the fixture
    private static final long BURST = 100;

    /** The model's view of one lease. */
    private record Held(long submitter, NicLane lane, long expiresAt) {}

    private final ManualClock clock = new ManualClock();
    private final NodeAdmission a = NodeAdmission.create(AdmissionFixture.policy(8, 6, 40), clock);
    private final Map<Long, Held> held = new HashMap<>();
    private final Map<Long, Long> outstanding = new HashMap<>();
    private final Set<Long> live = new HashSet<>();
    private final Set<Long> lost = new HashSet<>();
    private final Map<Long, Long> ticketDeadline = new HashMap<>();
    private final Map<Long, Long> ticketOwner = new HashMap<>();
    private final Map<NicLane, Long> pacedSince = new HashMap<>();
    private long start;

    @Test
    @DisplayName("ROUTE-11 window, evidence, pacer and queue invariants hold under seeded random operations")
    void invariantsUnderRandomOperations() {
        long seed = Long.getLong("orbitkv.seed", System.nanoTime());
        System.out.println("NodeAdmissionPropertyTest seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        start = clock.getAsLong();
        for (int round = 0; round < 20_000; round++) {
            step(rnd, seed, round);
            check(seed, round);
        }
    }

    private void step(Random rnd, long seed, int round) {
        int op = rnd.nextInt(100);
        if (op < 5 || live.isEmpty()) {
            register(rnd);
        } else if (op < 40) {
            lease(rnd, pick(rnd, live), LANES[rnd.nextInt(LANES.length)]);
        } else if (op < 70 && !held.isEmpty()) {
            giveBack(rnd, seed, round);
        } else if (op < 75) {
            long s = pick(rnd, live);
            a.lost(s);
            lost.add(s);
        } else if (op < 80 && !(lost.isEmpty() && live.isEmpty())) {
            long s = pick(rnd, lost.isEmpty() || rnd.nextBoolean() ? live : lost);
            a.terminated(s);
            held.entrySet().removeIf(e -> e.getValue().submitter() == s && outstanding.remove(e.getKey()) != null);
            live.remove(s);
            lost.remove(s);
        } else {
            clock.advance(rnd.nextInt(60_000_000));
            answer(a.advance(), seed, round);
        }
    }

    private void register(Random rnd) {
        SubmitterKind kind = SubmitterKind.values()[rnd.nextInt(3)];
        if (a.register(kind, "i" + rnd.nextInt(4)) instanceof AdmissionOutcome.Registered r) {
            live.add(r.submitter());
        }
    }

    private void lease(Random rnd, long s, NicLane lane) {
        long bytes = 1 + rnd.nextInt(100);
        long deadline = clock.getAsLong() + rnd.nextInt(200_000_000);
        AdmissionOutcome o = a.lease(s, lane, new LeaseRequest(bytes, deadline, bytes + rnd.nextInt(1_000),
                rnd.nextBoolean()));
        switch (o) {
            case AdmissionOutcome.Granted g -> record(s, g);
            case AdmissionOutcome.Queued q -> {
                ticketDeadline.put(q.ticket(), deadline);
                ticketOwner.put(q.ticket(), s);
            }
            default -> {}
        }
        if (lost.contains(s)) {
            assertThat(o).isInstanceOf(AdmissionOutcome.Refused.class);
        }
    }

    private void record(long s, AdmissionOutcome.Granted g) {
        held.put(g.lease(), new Held(s, g.lane(), g.expiresAtNanos()));
        outstanding.put(g.lease(), g.bytes());
    }

    private void giveBack(Random rnd, long seed, int round) {
        long lease = pick(rnd, held.keySet());
        Held h = held.get(lease);
        long bytes = 1 + rnd.nextInt((int) (long) outstanding.get(lease));
        ReturnEvidence ev = rnd.nextBoolean() ? ReturnEvidence.TRANSPORT_PROGRESS : ReturnEvidence.NEVER_SUBMITTED;
        boolean uncertain = lost.contains(h.submitter()) || clock.getAsLong() - h.expiresAt() >= 0;
        AdmissionOutcome o = a.returnBytes(h.submitter(), lease, bytes, ev);
        if (ev == ReturnEvidence.NEVER_SUBMITTED && uncertain) {
            assertThat(o).as("seed %d round %d: an uncertain lease returned unspent bytes", seed, round)
                    .isInstanceOf(AdmissionOutcome.Refused.class);
            return;
        }
        assertThat(o).as("seed %d round %d", seed, round).isInstanceOf(AdmissionOutcome.Returned.class);
        long left = outstanding.get(lease) - bytes;
        if (left == 0) {
            outstanding.remove(lease);
            held.remove(lease);
        } else {
            outstanding.put(lease, left);
        }
    }

    private void answer(List<AdmissionOutcome> out, long seed, int round) {
        for (AdmissionOutcome o : out) {
            long ticket = o instanceof AdmissionOutcome.Granted g ? g.ticket() : ((AdmissionOutcome.Refused) o).ticket();
            Long deadline = ticketDeadline.remove(ticket);
            assertThat(deadline).as("seed %d round %d: ticket %d answered twice or never queued", seed, round, ticket)
                    .isNotNull();
            if (o instanceof AdmissionOutcome.Granted g) {
                assertThat(clock.getAsLong()).as("seed %d round %d: granted after its deadline", seed, round)
                        .isLessThan(deadline);
                record(ticketOwner.remove(ticket), g);
            }
        }
    }

    private void check(long seed, int round) {
        AdmissionStatus st = a.status();
        long now = clock.getAsLong();
        for (AdmissionStatus.LaneStatus l : st.lanes()) {
            long model = 0;
            long uncertain = 0;
            for (Map.Entry<Long, Held> e : held.entrySet()) {
                if (e.getValue().lane().equals(l.lane())) {
                    model += outstanding.get(e.getKey());
                    if (lost.contains(e.getValue().submitter()) || now - e.getValue().expiresAt() >= 0) {
                        uncertain += outstanding.get(e.getKey());
                    }
                }
            }
            String at = "seed " + seed + " round " + round + " lane " + l.lane();
            assertThat(l.chargedBytes()).as(at).isEqualTo(model).isLessThanOrEqualTo(l.usableBytes());
            assertThat(l.quarantinedBytes()).as(at).isLessThanOrEqualTo(l.chargedBytes());
            assertThat(l.chargedBytes()).as(at + ": uncertain bytes left the window").isGreaterThanOrEqualTo(uncertain);
            if (l.usablePaceBytesPerSecond() > 0) {
                double allowed = BURST + (double) PACE * (now - start) / 1e9 + 1;
                assertThat((double) l.grantedBytesTotal()).as(at + ": pacer exceeded").isLessThanOrEqualTo(allowed);
            }
        }
        assertThat(st.leases()).isEqualTo(held.size());
        assertThat(st.pending()).isLessThanOrEqualTo(8);
    }

    private static long pick(Random rnd, Set<Long> from) {
        List<Long> list = new ArrayList<>(from);
        list.sort(null);
        return list.get(rnd.nextInt(list.size()));
    }
}
