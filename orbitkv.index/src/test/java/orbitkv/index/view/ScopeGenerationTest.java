package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import orbitkv.index.Coverage;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.LookupOutcome;
import orbitkv.index.Replica;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.membership.Incarnation;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * IDX-6: the index side of a scope change. A next scope generation is built beside the serving one, shares its one
 * byte budget and view generation counter, answers nothing until its own owner views install, never disturbs the
 * serving generation's answers, and a retired generation answers Unavailable and frees its rows in bounded batches.
 */
@Tag("unit")
class ScopeGenerationTest {
    private static final Incarnation A = Fixture.inc("a", 10);
    private static final Namespace NS_B = Namespace.utf8("ns-b");
    private static final Scope NEXT = Scope.of(List.of(Fixture.NS, NS_B));

    private static StateKey key(Namespace ns, String k) {
        return new StateKey(ns, k.getBytes(StandardCharsets.UTF_8));
    }

    private static List<ResidenceRecord> rows(Namespace ns, int n) {
        return rows(ns, n, 0);
    }

    /** {@code n} puts of {@code ns} at sequences {@code base + 1 ..}. */
    private static List<ResidenceRecord> rows(Namespace ns, int n, long base) {
        List<ResidenceRecord> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add(ResidenceRecord.put(key(ns, String.format("k%06d", i)), Medium.DRAM, base + i + 1, 100));
        }
        return l;
    }

    /** A one-page snapshot of {@code rows} of {@code owner} committed at {@code s1} into {@code index} for {@code scope}. */
    private static CommitOutcome install(GlobalIndex index, Scope scope, Incarnation owner, UUID view, long s1,
            List<ResidenceRecord> rows) {
        var digest = scope.digest();
        TranscriptDigest.Builder t = TranscriptDigest.builder().begin(1, view, digest, s1);
        StageOutcome b = index.beginStaging(owner, view, digest, s1, 1);
        if (b instanceof StageOutcome.Rejected r) {
            return new CommitOutcome.Rejected(r.reason());
        }
        t.page(2, 1, rows);
        StageOutcome p = index.stagePage(owner, view, 1, 2, rows);
        if (p instanceof StageOutcome.Rejected r) {
            return new CommitOutcome.Rejected(r.reason());
        }
        long max = rows.stream().mapToLong(ResidenceRecord::sequence).max().orElse(0);
        return index.commit(owner, view, new CommitMarker(s1, 1, 1, 2, max, t.finish()));
    }

    private static LookupOutcome.Candidates lookup(GlobalIndex index, StateKey k) {
        return (LookupOutcome.Candidates) index.lookup(List.of(k));
    }

    private static List<Replica> replicas(GlobalIndex index, StateKey k) {
        return lookup(index, k).keys().getFirst().replicas();
    }

    @Test
    @DisplayName("IDX-6 the next generation answers nothing until its owner installs; the serving one is undisturbed meanwhile")
    void nextGenerationBesideServing() {
        Fixture f = new Fixture(IndexConfig.defaults());
        f.admit(A);
        assertThat(install(f.index, Fixture.SCOPE, A, new UUID(1, 1), 10, rows(Fixture.NS, 4)))
                .isInstanceOf(CommitOutcome.Installed.class);
        GlobalIndex next = GlobalIndex.nextGeneration(f.index, NEXT);
        assertThat(next.scope()).isEqualTo(NEXT);
        f.admit(A); // the caller feeds both generations the same membership
        next.onMembership(membershipOf(f));
        // a snapshot bound to the serving scope's digest is refused by the next generation (SES-7)
        assertThat(next.beginStaging(A, new UUID(2, 1), Fixture.SCOPE.digest(), 10, 1))
                .isEqualTo(new StageOutcome.Rejected(RejectReason.SCOPE_DIGEST_MISMATCH));
        // staged but not committed: the next generation is PartialHints with no rows; the serving one is Complete
        assertThat(next.beginStaging(A, new UUID(2, 2), NEXT.digest(), 10, 1)).isInstanceOf(StageOutcome.Staged.class);
        StateKey a0 = key(Fixture.NS, "k000000");
        assertThat(lookup(next, a0).coverage()).isEqualTo(Coverage.PartialHints);
        assertThat(replicas(next, a0)).isEmpty();
        assertThat(lookup(f.index, a0).coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        assertThat(replicas(f.index, a0)).extracting(Replica::owner).containsExactly(A);
        // ns-b is outside the serving scope: Unavailable there whatever the next generation holds
        assertThat(install(next, NEXT, A, new UUID(2, 3), 12, concat(rows(Fixture.NS, 4), rows(NS_B, 3, 4))))
                .isInstanceOf(CommitOutcome.Installed.class);
        StateKey b0 = key(NS_B, "k000000");
        assertThat(lookup(f.index, b0).coverage()).isEqualTo(Coverage.Unavailable);
        assertThat(lookup(next, b0).coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        assertThat(replicas(next, b0)).extracting(Replica::owner).containsExactly(A);
        assertThat(next.installedCursor(A)).hasValueSatisfying(c -> assertThat(c.watermark()).isEqualTo(12));
        assertThat(f.index.installedCursor(A)).hasValueSatisfying(c -> assertThat(c.watermark()).isEqualTo(10));
    }

    @Test
    @DisplayName("IDX-6 SNAP-12 BND-1 both generations are charged to ONE budget; a next generation that cannot fit is refused, the serving one untouched")
    void oneBudget() {
        long row = RowCost.bytes(7);
        Fixture f = new Fixture(IndexConfig.defaults().withIndexBytesMax(10 * row));
        f.admit(A);
        assertThat(install(f.index, Fixture.SCOPE, A, new UUID(1, 1), 10, rows(Fixture.NS, 6)))
                .isInstanceOf(CommitOutcome.Installed.class);
        long serving = f.index.status().budgetBytesUsed();
        GlobalIndex next = GlobalIndex.nextGeneration(f.index, NEXT);
        next.onMembership(membershipOf(f));
        assertThat(install(next, NEXT, A, new UUID(2, 1), 10, rows(Fixture.NS, 6)))
                .isEqualTo(new CommitOutcome.Rejected(RejectReason.BUDGET_EXCEEDED));
        assertThat(f.index.status().budgetBytesUsed()).isEqualTo(serving);
        assertThat(replicas(f.index, key(Fixture.NS, "k000005"))).hasSize(1);
        assertThat(install(next, NEXT, A, new UUID(2, 2), 10, rows(NS_B, 3))).isInstanceOf(CommitOutcome.Installed.class);
        assertThat(next.status().budgetBytesUsed()).isEqualTo(f.index.status().budgetBytesUsed()).isGreaterThan(serving);
        assertThat(next.status().budgetBytesMax()).isEqualTo(10 * row);
    }

    @Test
    @DisplayName("IDX-6 IDX-1 a retired generation answers Unavailable at once, admits nobody, refuses frames and frees its rows in bounded batches")
    void retire() {
        Fixture f = new Fixture(IndexConfig.defaults().withCleanupBatchRowsMax(2));
        f.admit(A);
        install(f.index, Fixture.SCOPE, A, new UUID(1, 1), 10, rows(Fixture.NS, 5));
        GlobalIndex next = GlobalIndex.nextGeneration(f.index, NEXT);
        next.onMembership(membershipOf(f));
        install(next, NEXT, A, new UUID(2, 1), 10, rows(NS_B, 1));
        long both = next.status().budgetBytesUsed();
        f.index.retire();
        f.index.retire(); // idempotent
        StateKey a0 = key(Fixture.NS, "k000000");
        assertThat(lookup(f.index, a0).coverage()).isEqualTo(Coverage.Unavailable);
        assertThat(replicas(f.index, a0)).isEmpty();
        assertThat(f.index.beginStaging(A, new UUID(1, 2), Fixture.SCOPE.digest(), 11, 1)).isInstanceOf(StageOutcome.Rejected.class);
        f.admit(A);
        assertThat(f.index.status().owners()).isZero();
        assertThat(f.index.status().cleanupPendingRows()).isEqualTo(5);
        int steps = 0;
        while (!f.cleanupTasks.isEmpty() && steps++ < 100) {
            f.runCleanupStep();
        }
        assertThat(steps).as("5 rows in batches of 2").isEqualTo(3);
        assertThat(f.index.status().cleanupPendingRows()).isZero();
        assertThat(next.status().budgetBytesUsed()).isLessThan(both).isPositive();
        assertThat(replicas(next, key(NS_B, "k000000"))).extracting(Replica::owner).containsExactly(A);
    }

    @Test
    @DisplayName("IDX-6 IDX-8 the view generation never goes back across generations: one counter is shared")
    void viewGenerationMonotone() {
        Fixture f = new Fixture(IndexConfig.defaults());
        f.admit(A);
        install(f.index, Fixture.SCOPE, A, new UUID(1, 1), 10, rows(Fixture.NS, 2));
        long before = f.index.status().viewGeneration();
        GlobalIndex next = GlobalIndex.nextGeneration(f.index, NEXT);
        next.onMembership(membershipOf(f));
        assertThat(next.status().viewGeneration()).isGreaterThan(before);
        f.admit(A); // the serving generation publishes again
        long serving = f.index.status().viewGeneration();
        next.onMembership(membershipOf(f)); // the swap publishes the next generation once more
        assertThat(next.status().viewGeneration()).isGreaterThan(serving);
    }

    @Test
    @DisplayName("IDX-6 only an index made by GlobalIndex.create has a next generation")
    void foreignIndexRefused() {
        assertThatThrownBy(() -> GlobalIndex.nextGeneration(null, NEXT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("GlobalIndex.create");
    }

    private static List<ResidenceRecord> concat(List<ResidenceRecord> a, List<ResidenceRecord> b) {
        List<ResidenceRecord> l = new ArrayList<>(a);
        l.addAll(b);
        return l;
    }

    /** The fixture's latest membership view (its revision already advanced by {@link Fixture#admit}). */
    private static Fixture.View membershipOf(Fixture f) {
        java.util.Map<orbitkv.membership.NodeId, orbitkv.membership.Member> m = new java.util.LinkedHashMap<>();
        for (Incarnation i : List.of(Fixture.SELF, A)) {
            m.put(i.nodeId(), new orbitkv.membership.Member(i, new orbitkv.membership.Endpoint("127.0.0.1", 1),
                    new orbitkv.membership.Endpoint("127.0.0.1", 2), orbitkv.membership.ClusterIdentity.PROTOCOL));
        }
        return new Fixture.View(++f.revision, true, m);
    }
}
