package orbitkv.conformance.membership;

import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import static orbitkv.conformance.membership.Gates.SHORT;
import static orbitkv.conformance.membership.Gates.cluster;
import static orbitkv.conformance.membership.Gates.format;
import static orbitkv.conformance.membership.Gates.node;
import static orbitkv.conformance.membership.Gates.registered;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.MembershipEvent.FenceCause;
import orbitkv.membership.NodeId;
import orbitkv.membership.RegistrationResult;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Membership against one real etcd process (DESIGN §3). */
@Tag("gate")
class MembershipGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(15);

    @Test
    @DisplayName("MEM-2 MEM-7 registration increments the node epoch; each registration is a new incarnation; views converge")
    void registrationAndEpochs() {
        String c = cluster();
        EtcdEndpoints etcd = ETCD.endpoints();
        format(etcd, c);
        Membership a1 = registered(etcd, node(c, "a"), SHORT);
        Membership b = registered(etcd, node(c, "b"), SHORT);
        try {
            assertThat(a1.incarnation().epoch().value()).isEqualTo(1);
            assertThat(b.view().isAdmitted(a1.incarnation())).isTrue();
            Await.until("a sees b", BOUND, () -> a1.view().isAdmitted(b.incarnation()));
            assertThat(a1.view().revision()).isGreaterThan(0);
            assertThat(ETCD.get("/orbitkv/v2/" + c + "/epochs/a")).startsWith("node_epoch = 1\n");

            a1.close(); // deregistration revokes the lease: b excludes a1 at once (IDX-13)
            Await.until("b excludes a1", BOUND, () -> b.view().member(new NodeId("a")).isEmpty());
            Membership a2 = registered(etcd, node(c, "a"), SHORT);
            try {
                assertThat(a2.incarnation().epoch().value()).isEqualTo(2);
                assertThat(a2.incarnation().id()).isNotEqualTo(a1.incarnation().id());
                Await.until("b admits a2", BOUND, () -> b.view().isAdmitted(a2.incarnation()));
                assertThat(b.view().isAdmitted(a1.incarnation())).isFalse();
                assertThat(ETCD.get("/orbitkv/v2/" + c + "/epochs/a")).startsWith("node_epoch = 2\n");
            } finally {
                a2.close();
            }
        } finally {
            a1.close();
            b.close();
        }
    }

    @Test
    @DisplayName("MEM-2 IDX-13 a clean close fences with SHUTDOWN, never as a lease loss, and a peer excludes the incarnation at once")
    void cleanCloseIsShutdown() {
        String c = cluster();
        EtcdEndpoints etcd = ETCD.endpoints();
        format(etcd, c);
        Membership observer = registered(etcd, node(c, "observer"), SHORT);
        try {
            for (int round = 0; round < 8; round++) { // the revoke and the watch raced: repeat to give it chances
                Membership m = registered(etcd, node(c, "m"), SHORT);
                EventLog log = new EventLog();
                m.addListener(log);
                Await.until("observer admits m", BOUND, () -> observer.view().isAdmitted(m.incarnation()));
                m.close();
                Await.until("m fenced", BOUND, () -> log.first(MembershipEvent.Fenced.class).isPresent());
                var fenced = (MembershipEvent.Fenced) log.first(MembershipEvent.Fenced.class).orElseThrow().event();
                assertThat(fenced.cause()).as("round %d: fence cause of a clean close", round).isEqualTo(FenceCause.SHUTDOWN);
                assertThat(log.entries().stream().filter(e -> e.event() instanceof MembershipEvent.Fenced).count())
                        .as("round %d: exactly one Fenced event in %s", round, log.entries()).isEqualTo(1);
                Await.until("observer excludes m", BOUND, () -> observer.view().member(new NodeId("m")).isEmpty());
            }
        } finally {
            observer.close();
        }
    }

    @Test
    @DisplayName("MEM-2 INV-7 a registration replaces the record of the same node id; the replaced live process fences itself")
    void replacementFencesTheOld() {
        String c = cluster();
        EtcdEndpoints etcd = ETCD.endpoints();
        format(etcd, c);
        Membership old = registered(etcd, node(c, "n"), SHORT);
        EventLog log = new EventLog();
        old.addListener(log);
        Membership fresh = registered(etcd, node(c, "n"), SHORT);
        try {
            Await.until("old incarnation fenced", BOUND, () -> log.first(MembershipEvent.Fenced.class).isPresent());
            var fenced = (MembershipEvent.Fenced) log.first(MembershipEvent.Fenced.class).orElseThrow().event();
            assertThat(fenced.cause()).isEqualTo(FenceCause.REPLACED_BY_NEWER_INCARNATION);
            assertThat(fenced.fenced()).isEqualTo(old.incarnation());
            assertThat(old.view().valid()).isFalse();
            assertThat(fresh.incarnation().epoch()).isEqualTo(old.incarnation().epoch().next());
            assertThat(fresh.view().isAdmitted(fresh.incarnation())).isTrue();
            assertThat(fresh.view().isAdmitted(old.incarnation())).isFalse();
            assertThat(fresh.fenced()).isFalse();
        } finally {
            old.close();
            fresh.close();
        }
    }

    @Test
    @DisplayName("MEM-2 two or more processes race for one node id: exactly one stays admitted, the epoch counts the commits")
    void racingRegistrations() throws Exception {
        String c = cluster();
        EtcdEndpoints etcd = ETCD.endpoints();
        format(etcd, c);
        int racers = 6;
        CyclicBarrier start = new CyclicBarrier(racers);
        List<RegistrationResult> results = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(racers)) {
            List<Future<RegistrationResult>> fs = new ArrayList<>();
            for (int i = 0; i < racers; i++) {
                fs.add(pool.submit(() -> {
                    start.await();
                    return Membership.register(etcd, node(c, "race"), SHORT);
                }));
            }
            for (Future<RegistrationResult> f : fs) {
                results.add(f.get());
            }
        }
        List<Membership> winners = results.stream().filter(r -> r instanceof RegistrationResult.Registered)
                .map(r -> ((RegistrationResult.Registered) r).membership()).toList();
        try {
            assertThat(results).allMatch(r -> r instanceof RegistrationResult.Registered
                    || r instanceof RegistrationResult.Contended);
            assertThat(winners).isNotEmpty();
            Membership newest = winners.stream().max((x, y) -> x.incarnation().epoch().compareTo(y.incarnation().epoch())).orElseThrow();
            // every other committed registration was replaced and fences itself
            Await.until("exactly one racer unfenced", BOUND,
                    () -> winners.stream().filter(m -> !m.fenced()).count() == 1 && !newest.fenced());
            assertThat(newest.view().isAdmitted(newest.incarnation())).isTrue();
            assertThat(ETCD.get("/orbitkv/v2/" + c + "/epochs/race")).startsWith("node_epoch = " + winners.size() + "\n");
            System.out.printf("race: %d racers, %d committed, %d contended%n", racers, winners.size(), racers - winners.size());
        } finally {
            winners.forEach(Membership::close);
        }
    }

    @Test
    @DisplayName("MEM-3 old-binary rejection: registering against another format value fails naming both values; unformatted names `orbitkv admin format`")
    void formatMismatch() {
        EtcdEndpoints etcd = ETCD.endpoints();
        String c = cluster();
        RegistrationResult none = Membership.register(etcd, node(c, "a"), SHORT);
        assertThat(none).isInstanceOfSatisfying(RegistrationResult.Unformatted.class,
                u -> assertThat(u.message()).contains("orbitkv admin format").contains("/orbitkv/v2/" + c + "/format"));
        String old = "protocol = orbitkv/etcd-block-publisher/v3\ncluster_uuid = 6f1c1c44-0000-4000-8000-000000000001\n";
        ETCD.put("/orbitkv/v2/" + c + "/format", old);
        RegistrationResult r = Membership.register(etcd, node(c, "a"), SHORT);
        assertThat(r).isInstanceOfSatisfying(RegistrationResult.FormatMismatch.class, m -> {
            assertThat(m.found()).isEqualTo(old);
            assertThat(m.message()).contains("orbitkv/inventory-stream/v4").contains("orbitkv/etcd-block-publisher/v3");
        });
        assertThat(ETCD.keys("/orbitkv/v2/" + c + "/")).containsExactly("/orbitkv/v2/" + c + "/format");
    }

    @Test
    @DisplayName("MEM-8 INV-7 lease loss (keep-alive black-holed by a TCP proxy) fences at the conservative deadline, before etcd expires the lease; healing is a new incarnation")
    void leaseLossFencesThenHeals() throws Exception {
        String c = cluster();
        EtcdEndpoints direct = ETCD.endpoints();
        format(direct, c);
        Membership observer = registered(direct, node(c, "observer"), Gates.QUORUM);
        try (FaultProxy proxy = FaultProxy.inFrontOf(ETCD.member(0).clientUrl())) {
            EtcdEndpoints viaProxy = new EtcdEndpoints(List.of(proxy.url()));
            Membership victim = registered(viaProxy, node(c, "victim"), SHORT);
            EventLog log = new EventLog();
            victim.addListener(log);
            Await.until("observer admits victim", BOUND, () -> observer.view().isAdmitted(victim.incarnation()));
            Await.until("a renewal confirmed", BOUND, () -> victim.leaseStatus().confirmedRenewals() > 0);

            long cut = System.nanoTime();
            proxy.faults(LinkFaults.BLACKHOLE);
            Await.until("victim fenced", Duration.ofSeconds(10), () -> log.first(MembershipEvent.Fenced.class).isPresent());
            long fencedAt = log.first(MembershipEvent.Fenced.class).orElseThrow().atNanos();
            var fence = (MembershipEvent.Fenced) log.first(MembershipEvent.Fenced.class).orElseThrow().event();
            long deadline = victim.leaseStatus().deadlineNanos();
            assertThat(fence.cause()).isEqualTo(FenceCause.LEASE_DEADLINE_PASSED);
            assertThat(fencedAt - deadline).as("fenced at, not before, the deadline").isGreaterThanOrEqualTo(0);
            assertThat(fencedAt - deadline).as("fenced promptly after the deadline").isLessThan(1_000_000_000L);
            assertThat(deadline - cut).as("deadline within TTL - margin of the cut")
                    .isLessThanOrEqualTo(Duration.ofMillis(SHORT.fenceAfterRenewalMs()).toNanos());
            // Conservative: etcd still holds the member when the process has already fenced itself.
            assertThat(observer.view().isAdmitted(victim.incarnation())).as("etcd lease still live at fence time").isTrue();
            assertThat(victim.view().valid()).isFalse();
            Await.until("etcd expires the lease and the observer excludes the victim", BOUND,
                    () -> !observer.view().isAdmitted(victim.incarnation()));
            System.out.printf("lease loss: fenced %d ms after the cut, etcd expiry seen %d ms after the cut%n",
                    (fencedAt - cut) / 1_000_000, (System.nanoTime() - cut) / 1_000_000);

            proxy.faults(LinkFaults.NONE);
            RegistrationResult healed = victim.reregister();
            assertThat(healed).isInstanceOf(RegistrationResult.Registered.class);
            Membership next = ((RegistrationResult.Registered) healed).membership();
            try {
                assertThat(next.incarnation().epoch()).isEqualTo(victim.incarnation().epoch().next());
                assertThat(next.incarnation().id()).isNotEqualTo(victim.incarnation().id());
                Await.until("observer admits the healed incarnation", BOUND, () -> observer.view().isAdmitted(next.incarnation()));
                assertThat(victim.fenced()).as("fencing is irrevocable").isTrue();
            } finally {
                next.close();
                victim.close();
            }
        } finally {
            observer.close();
        }
    }

    @Test
    @DisplayName("MEM-9 a compaction during the watch suspends remote admission, then membership is re-read and repaired")
    void compactionSuspendsThenRepairs() throws Exception {
        String c = cluster();
        EtcdEndpoints direct = ETCD.endpoints();
        format(direct, c);
        try (FaultProxy proxy = FaultProxy.inFrontOf(ETCD.member(0).clientUrl())) {
            Membership watcher = registered(new EtcdEndpoints(List.of(proxy.url())), node(c, "watcher"), Gates.QUORUM);
            EventLog log = new EventLog();
            watcher.addListener(log);
            Membership first = registered(direct, node(c, "first"), SHORT);
            Await.until("watcher admits first", BOUND, () -> watcher.view().isAdmitted(first.incarnation()));

            proxy.faults(LinkFaults.REFUSE); // the watch stream breaks; jetcd resumes from its last revision
            long cut = System.nanoTime();
            first.close(); // changes the watcher misses ...
            Membership second = registered(direct, node(c, "second"), SHORT);
            ETCD.put("/orbitkv/v2/" + c + "/unrelated", "x");
            long compacted = ETCD.compactToCurrent(); // ... and the history it would resume from is gone
            proxy.faults(LinkFaults.NONE);
            try {
                Await.until("watcher suspended by the gap", BOUND, () -> log.firstAfter(MembershipEvent.Suspended.class, cut).isPresent());
                var suspended = log.firstAfter(MembershipEvent.Suspended.class, cut).orElseThrow();
                assertThat(((MembershipEvent.Suspended) suspended.event()).cause()).contains("compacted");
                assertThat(suspended.event().view().valid()).isFalse();
                assertThat(suspended.event().view().isAdmitted(watcher.incarnation())).isFalse();
                Await.until("membership re-read at a revision after the compaction", BOUND,
                        () -> watcher.view().valid() && watcher.view().revision() >= compacted);
                assertThat(watcher.view().isAdmitted(second.incarnation())).isTrue();
                assertThat(watcher.view().member(new NodeId("first"))).isEmpty();
                assertThat(watcher.fenced()).isFalse();
                System.out.println("compaction gap: " + ((MembershipEvent.Suspended) suspended.event()).cause());
            } finally {
                second.close();
                watcher.close();
            }
        }
    }
}
