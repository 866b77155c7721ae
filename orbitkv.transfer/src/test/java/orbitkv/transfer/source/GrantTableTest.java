package orbitkv.transfer.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.Medium;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.GrantEnd;
import orbitkv.transfer.Intent;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.TestMembership;
import orbitkv.transfer.TestPayloadSource;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.TransferFixture;
import orbitkv.transfer.frame.DataStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The grant table's pin accounting and grant lifetimes (INV-9), without sockets: the state machine's edges,
 * DRAINING (a grant that ends while its payload is on the wire keeps its pins until the send completes), the
 * total and prefetch bounds across requesters, and a seeded random schedule checked against an independent
 * model of who holds which pins.
 */
@Tag("unit")
class GrantTableTest {
    private static final Incarnation A = Incarnation.random(new NodeId("req-a"), new NodeEpoch(1));
    private static final Incarnation B = Incarnation.random(new NodeId("req-b"), new NodeEpoch(1));
    /** A send whose connection the table may cut; these tests end their sends themselves. */
    private static final GrantTable.SendCut NO_CUT = () -> {};
    private final AtomicLong clock = new AtomicLong(5_000_000_000L);
    private final SourceCounters counters = new SourceCounters();
    @TempDir
    Path dir;
    private TestPayloadSource payloads;

    @BeforeEach
    void start() throws IOException {
        payloads = new TestPayloadSource(dir, 64L << 20, Files.createDirectories(dir.resolve("ssd")), 1_000_000);
    }

    @AfterEach
    void stop() throws IOException {
        payloads.close();
    }

    private GrantTable table(TransferConfig c) {
        return new GrantTable(c, clock::get, counters);
    }

    private BlockRef put(int i, int size) {
        return new BlockRef(TransferFixture.key(i), Medium.DRAM, payloads.putDram(TransferFixture.key(i), new byte[size]));
    }

    @Test
    @DisplayName("INV-9 the grant state machine: ACTIVE -> DRAINING -> FINISHED, ACTIVE -> FINISHED; every other edge throws")
    void stateMachine() {
        GrantTable t = table(TransferFixture.testConfig());
        SourceGrant g = t.issue(A, Intent.FOREGROUND, List.of(put(1, 10)), payloads).grant();
        assertThatThrownBy(() -> g.transition(SourceGrant.State.ACTIVE, GrantEnd.RELEASED)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> g.transition(SourceGrant.State.DRAINING, GrantEnd.RELEASED))
                .as("DRAINING needs a send in flight").isInstanceOf(IllegalStateException.class);
        g.transition(SourceGrant.State.FINISHED, GrantEnd.RELEASED);
        assertThat(g.end()).isEqualTo(GrantEnd.RELEASED);
        assertThatThrownBy(() -> g.transition(SourceGrant.State.FINISHED, GrantEnd.RELEASED)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> g.transition(SourceGrant.State.DRAINING, GrantEnd.RELEASED)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("INV-8 INV-9 a grant that ends while its block is being sent keeps the pin until the send completes")
    void drainingKeepsPins() {
        GrantTable t = table(TransferFixture.testConfig());
        SourceGrant g = t.issue(A, Intent.FOREGROUND, List.of(put(1, 100), put(2, 100)), payloads).grant();
        GrantTable.SendStart.Start s = (GrantTable.SendStart.Start) t.beginSend(g.id, 0, true, NO_CUT);
        assertThat(t.release(A, g.id)).isEqualTo(GrantTable.ReleaseResult.RELEASED);
        assertThat(g.state()).isEqualTo(SourceGrant.State.DRAINING);
        assertThat(t.pinsHeld()).as("bytes on the wire stay pinned").isEqualTo(2);
        assertThat(payloads.pinsHeld()).isEqualTo(2);
        assertThat(t.outstanding()).isZero();
        assertThat(t.beginSend(g.id, 1, true, NO_CUT)).isInstanceOfSatisfying(GrantTable.SendStart.Refuse.class,
                r -> assertThat(r.status()).isEqualTo(DataStatus.GRANT_UNKNOWN));
        t.endSend(s);
        assertThat(g.state()).isEqualTo(SourceGrant.State.FINISHED);
        assertThat(t.pinsHeld()).isZero();
        assertThat(payloads.pinsHeld()).isZero();
        assertThat(t.requestersHoldingPins()).isZero();
    }

    @Test
    @DisplayName("INV-9 a grant's end cuts its sends in flight once (expiry, exclusion, fence); a release drains them until the expiry")
    void endCutsSendsInFlight() {
        TransferConfig c = TransferFixture.testConfig();
        GrantTable t = table(c);
        TestMembership view = new TestMembership(new ClusterIdentity("c", UUID.randomUUID()), A, B);
        List<String> cut = new ArrayList<>();
        SourceGrant expiring = t.issue(A, Intent.FOREGROUND, List.of(put(1, 100), put(2, 100)), payloads).grant();
        SourceGrant excluded = t.issue(B, Intent.FOREGROUND, List.of(put(3, 100)), payloads).grant();
        SourceGrant released = t.issue(A, Intent.FOREGROUND, List.of(put(4, 100)), payloads).grant();
        var s0 = (GrantTable.SendStart.Start) t.beginSend(expiring.id, 0, true, () -> cut.add("expiring/0"));
        var s1 = (GrantTable.SendStart.Start) t.beginSend(expiring.id, 1, true, () -> cut.add("expiring/1"));
        var s2 = (GrantTable.SendStart.Start) t.beginSend(excluded.id, 0, true, () -> cut.add("excluded/0"));
        var s3 = (GrantTable.SendStart.Start) t.beginSend(released.id, 0, true, () -> cut.add("released/0"));
        t.endSend(s1); // written out before the end: nothing to cut

        t.exclude(view.set(true, A));
        assertThat(cut).containsExactly("excluded/0");
        assertThat(t.release(A, released.id)).isEqualTo(GrantTable.ReleaseResult.RELEASED);
        assertThat(cut).as("a release drains").containsExactly("excluded/0");
        clock.addAndGet(c.grantExpiryMs() * 1_000_000L);
        assertThat(t.sweepExpired()).isEqualTo(1);
        assertThat(cut.getFirst()).isEqualTo("excluded/0");
        assertThat(cut).as("the sweep visits grants in table (hash) order").containsExactlyInAnyOrder("excluded/0",
                "expiring/0", "released/0");
        t.sweepExpired();
        t.endAll(GrantEnd.FENCED, true);
        assertThat(cut).as("each send is cut once").hasSize(3);
        assertThat(counters.sendsCut.snapshot()).containsEntry(GrantEnd.EXPIRED, 2L).containsEntry(GrantEnd.EXCLUDED, 1L)
                .containsEntry(GrantEnd.RELEASED, 0L).containsEntry(GrantEnd.FENCED, 0L);
        assertThat(t.pinsHeld()).as("cut sends hold their pins until their writes fail").isEqualTo(4);
        t.endSend(s0);
        t.endSend(s2);
        t.endSend(s3);
        assertThat(t.pinsHeld()).isZero();
        assertThat(payloads.pinsHeld()).isZero();
    }

    @Test
    @DisplayName("INV-9 expiry ends the grant at exactly its deadline on the injected clock; a send of an expired grant is refused")
    void expiryOnTheClock() {
        TransferConfig c = TransferFixture.testConfig();
        GrantTable t = table(c);
        SourceGrant g = t.issue(A, Intent.FOREGROUND, List.of(put(1, 100)), payloads).grant();
        clock.addAndGet(c.grantExpiryMs() * 1_000_000L - 1);
        assertThat(t.sweepExpired()).isZero();
        clock.incrementAndGet();
        assertThat(t.beginSend(g.id, 0, true, NO_CUT)).isInstanceOf(GrantTable.SendStart.Refuse.class);
        assertThat(t.pinsHeld()).isZero();
        assertThat(counters.grantsEnded.get(GrantEnd.EXPIRED)).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 the total bounds hold across requesters, the prefetch share across intents")
    void totalAndPrefetchBounds() {
        TransferConfig d = TransferFixture.testConfig().withWindows(1000, 1000, 1000, 64, 16);
        GrantTable t = table(d.withPins(3, 3000, 4, 4000, 1500));
        var ga = t.issue(A, Intent.FOREGROUND, List.of(put(1, 1000), put(2, 1000), put(3, 1000)), payloads);
        assertThat(ga.blocks()).allMatch(b -> b instanceof GrantTable.BlockOutcome.Granted);
        var gb = t.issue(B, Intent.PREFETCH, List.of(put(4, 1000), put(5, 1000)), payloads);
        assertThat(gb.blocks().get(0)).isInstanceOf(GrantTable.BlockOutcome.Granted.class);
        assertThat(((GrantTable.BlockOutcome.Refused) gb.blocks().get(1)).reason()).isEqualTo(RefusalReason.PINS_EXHAUSTED);
        t.release(A, ga.grant().id);
        var gc = t.issue(B, Intent.PREFETCH, List.of(put(6, 1000)), payloads);
        assertThat(((GrantTable.BlockOutcome.Refused) gc.blocks().get(0)).reason()).isEqualTo(RefusalReason.PREFETCH_LIMIT);
        assertThat(t.prefetchPinnedBytesHeld()).isEqualTo(1000);
        assertThat(t.pinsHeld()).isEqualTo(1);
        assertThat(payloads.pinsHeld()).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 property: a seeded random schedule of issue/send/release/expiry/exclusion keeps the table equal to a model, within bounds, and ends at zero")
    void randomScheduleAgainstModel() {
        long seed = Long.getLong("orbitkv.seed", System.nanoTime());
        System.out.println("GrantTableTest.randomScheduleAgainstModel seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        SplittableRandom rnd = new SplittableRandom(seed);
        TransferConfig c = TransferFixture.testConfig().withWindows(4096, 4096, 4096, 64, 16)
                .withPins(6, 12_000, 10, 20_000, 8_000);
        GrantTable t = table(c);
        TestMembership view = new TestMembership(new ClusterIdentity("c", UUID.randomUUID()), A, B);
        Incarnation[] reqs = {A, B};
        record Live(SourceGrant grant, Incarnation requester, long bytes, int pins, List<GrantTable.SendStart.Start> sends) {}
        List<Live> live = new ArrayList<>();
        Map<Incarnation, long[]> model = new HashMap<>(); // requester -> {pins, bytes} incl. draining grants
        List<BlockRef> pool = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            pool.add(put(i, 1 + rnd.nextInt(4096)));
        }
        for (int step = 0; step < 3000; step++) {
            int op = rnd.nextInt(10);
            if (op < 4) {
                Incarnation r = reqs[rnd.nextInt(2)];
                List<BlockRef> picks = new ArrayList<>();
                for (int k = 1 + rnd.nextInt(4); k > 0; k--) {
                    BlockRef b = pool.get(rnd.nextInt(pool.size()));
                    if (!picks.contains(b)) {
                        picks.add(b);
                    }
                }
                Intent intent = rnd.nextInt(4) == 0 ? Intent.PREFETCH : Intent.FOREGROUND;
                var issued = t.issue(r, intent, picks, payloads);
                if (issued.grant() != null) {
                    SourceGrant g = issued.grant();
                    live.add(new Live(g, r, g.pinnedBytes, g.pinCount, new ArrayList<>()));
                    long[] m = model.computeIfAbsent(r, x -> new long[2]);
                    m[0] += g.pinCount;
                    m[1] += g.pinnedBytes;
                }
            } else if (op < 6 && !live.isEmpty()) {
                Live l = live.get(rnd.nextInt(live.size()));
                int idx = rnd.nextInt(l.grant().pins.length);
                if (t.beginSend(l.grant().id, idx, true, NO_CUT) instanceof GrantTable.SendStart.Start s) {
                    l.sends().add(s);
                }
            } else if (op < 7 && !live.isEmpty()) {
                Live l = live.get(rnd.nextInt(live.size()));
                if (!l.sends().isEmpty()) {
                    t.endSend(l.sends().removeFirst());
                }
            } else if (op < 8 && !live.isEmpty()) {
                Live l = live.get(rnd.nextInt(live.size()));
                t.release(l.requester(), l.grant().id);
            } else if (op < 9) {
                clock.addAndGet(rnd.nextLong(c.grantExpiryMs() * 300_000L));
                t.sweepExpired();
            } else {
                Incarnation keep = reqs[rnd.nextInt(2)];
                t.exclude(rnd.nextBoolean() ? view.set(true, keep) : view.set(false));
            }
            // Finished grants leave the model: their pins are released exactly once.
            for (var it = live.iterator(); it.hasNext(); ) {
                Live l = it.next();
                if (l.grant().state() == SourceGrant.State.FINISHED) {
                    long[] m = model.get(l.requester());
                    m[0] -= l.pins();
                    m[1] -= l.bytes();
                    it.remove();
                }
            }
            long pins = model.values().stream().mapToLong(m -> m[0]).sum();
            long bytes = model.values().stream().mapToLong(m -> m[1]).sum();
            assertThat(t.pinsHeld()).as("step %d seed %d", step, seed).isEqualTo(pins);
            assertThat(t.pinnedBytesHeld()).isEqualTo(bytes);
            assertThat(payloads.pinsHeld()).as("the payload owner agrees").isEqualTo((int) pins);
            assertThat(pins).isLessThanOrEqualTo(c.pinsTotalMax());
            assertThat(bytes).isLessThanOrEqualTo(c.pinnedBytesTotalMax());
            assertThat(t.prefetchPinnedBytesHeld()).isLessThanOrEqualTo(c.prefetchPinnedBytesTotalMax());
            for (long[] m : model.values()) {
                assertThat(m[0]).isLessThanOrEqualTo(c.pinsPerRequesterMax());
                assertThat(m[1]).isLessThanOrEqualTo(c.pinnedBytesPerRequesterMax());
            }
            assertThat(t.outstanding()).isEqualTo(live.stream().filter(l -> l.grant().state() == SourceGrant.State.ACTIVE).count());
        }
        t.endAll(GrantEnd.CLOSED, true);
        for (Live l : live) {
            for (GrantTable.SendStart.Start s : l.sends()) {
                t.endSend(s);
            }
        }
        assertThat(t.pinsHeld()).isZero();
        assertThat(t.pinnedBytesHeld()).isZero();
        assertThat(payloads.pinsHeld()).isZero();
        assertThat(t.requestersHoldingPins()).isZero();
    }
}
