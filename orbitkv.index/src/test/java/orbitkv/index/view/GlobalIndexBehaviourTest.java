package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import orbitkv.index.Coverage;
import orbitkv.index.IndexConfig;
import orbitkv.index.IndexStatus;
import orbitkv.index.LookupOutcome;
import orbitkv.index.OwnerState;
import orbitkv.index.OwnerViewStatus;
import orbitkv.index.StatusPage;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class GlobalIndexBehaviourTest {
    static final Incarnation A = Fixture.inc("a", 10);
    static final Incarnation B = Fixture.inc("b", 20);

    @Test
    @DisplayName("SNAP-12 a replacement that cannot fit withdraws the old view, frees it, and is reported")
    void replacementOverBudgetWithdrawsOldView() {
        long row = RowCost.bytes(7);
        Fixture f = new Fixture(IndexConfig.defaults().withIndexBytesMax(15 * row));
        f.admit(A, B);
        assertThat(f.install(B, new UUID(2, 1), 5, Fixture.puts(4, 1))).isInstanceOf(CommitOutcome.Installed.class);
        assertThat(f.install(A, new UUID(1, 1), 10, Fixture.puts(8, 1))).isInstanceOf(CommitOutcome.Installed.class);
        // 8 old + 8 new rows of A plus 4 of B cannot fit 15: the old view of A is withdrawn, then staging fits.
        CommitOutcome second = f.install(A, new UUID(1, 2), 20, Fixture.puts(8, 2));
        assertThat(second).isInstanceOf(CommitOutcome.Installed.class);
        IndexStatus st = f.index.status();
        assertThat(st.viewsWithdrawn()).isEqualTo(1);
        assertThat(st.budgetBytesUsed()).isEqualTo(12 * row);
        // B's rows were never touched (no random eviction).
        LookupOutcome.Candidates c = (LookupOutcome.Candidates) f.index.lookup(List.of(Fixture.key("k000003")));
        assertThat(c.keys().getFirst().replicas()).extracting(r -> r.owner()).containsExactlyInAnyOrder(A, B);
        // A replacement that cannot fit even alone is refused and reported; the owner is WITHDRAWN.
        CommitOutcome third = f.install(A, new UUID(1, 3), 30, Fixture.puts(12, 3));
        assertThat(third).isEqualTo(new CommitOutcome.Rejected(RejectReason.BUDGET_EXCEEDED));
        OwnerViewStatus a = f.index.ownerStatus(10, Optional.empty()).owners().getFirst();
        assertThat(a.state()).isEqualTo(OwnerState.WITHDRAWN);
        assertThat(a.lastResetCause()).contains(ResetCause.BUDGET_EXCEEDED);
        assertThat(a.rows()).isZero();
        assertThat(f.index.coverage()).isEqualTo(Coverage.PartialHints);
        assertThat(f.index.status().budgetBytesUsed()).isEqualTo(4 * row);
    }

    @Test
    @DisplayName("SNAP-12 DELTA-2 a delta that cannot be reserved withdraws the owner view, never random rows")
    void deltaOverBudgetWithdraws() {
        long row = RowCost.bytes(7);
        Fixture f = new Fixture(IndexConfig.defaults().withIndexBytesMax(5 * row));
        f.admit(A);
        UUID v = new UUID(1, 1);
        f.install(A, v, 10, Fixture.puts(4, 1));
        List<ResidenceRecord> recs = new ArrayList<>();
        recs.add(ResidenceRecord.put(Fixture.key("x000001"), Medium.DRAM, 11, 1));
        recs.add(ResidenceRecord.put(Fixture.key("x000002"), Medium.DRAM, 12, 1));
        DeltaOutcome out = f.index.applyDelta(A, v, 3, Interval.of(10, 12), recs);
        assertThat(out).isEqualTo(new DeltaOutcome.Rejected(RejectReason.BUDGET_EXCEEDED));
        assertThat(f.index.installedCursor(A)).isEmpty();
        assertThat(f.index.status().budgetBytesUsed()).isZero();
    }

    @Test
    @DisplayName("IDX-1 IDX-13 removal excludes at once; rows are freed in bounded asynchronous batches")
    void removalIsImmediateAndCleanupBounded() {
        Fixture f = new Fixture(IndexConfig.defaults().withCleanupBatchRowsMax(100));
        f.admit(A, B);
        f.install(A, new UUID(1, 1), 1000, Fixture.puts(1000, 1));
        f.install(B, new UUID(2, 1), 5, Fixture.puts(5, 1));
        long before = f.index.status().budgetBytesUsed();
        f.admit(B); // A leaves membership
        LookupOutcome.Candidates c = (LookupOutcome.Candidates) f.index.lookup(List.of(Fixture.key("k000001")));
        assertThat(c.keys().getFirst().replicas()).extracting(r -> r.owner()).containsExactly(B);
        assertThat(c.coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        assertThat(f.index.status().cleanupPendingRows()).isEqualTo(1000);
        assertThat(f.index.status().budgetBytesUsed()).isEqualTo(before); // still charged until cleaned
        int steps = 0;
        while (!f.cleanupTasks.isEmpty()) {
            long pending = f.index.status().cleanupPendingRows();
            f.runCleanupStep();
            assertThat(pending - f.index.status().cleanupPendingRows()).isBetween(0L, 100L);
            steps++;
        }
        assertThat(steps).isEqualTo(10);
        assertThat(f.index.status().cleanupPendingRows()).isZero();
        assertThat(f.index.status().budgetBytesUsed()).isEqualTo(5 * RowCost.bytes(7));
        assertThat(f.index.applyDelta(A, new UUID(1, 1), 9, Interval.of(1000, 1001), List.of()))
                .isEqualTo(new DeltaOutcome.Rejected(RejectReason.UNKNOWN_SOURCE_INCARNATION));
    }

    @Test
    @DisplayName("IDX-9 lookups take at most 128 keys / 64 KiB; more is an explicit refusal")
    void lookupBounds() {
        Fixture f = new Fixture(IndexConfig.defaults());
        f.admit(A);
        List<StateKey> keys = new ArrayList<>();
        for (int i = 0; i < 129; i++) {
            keys.add(Fixture.key("k" + i));
        }
        assertThat(f.index.lookup(keys)).isEqualTo(new LookupOutcome.Refused("keys", 128, 129));
        assertThat(f.index.lookup(keys.subList(0, 128))).isInstanceOf(LookupOutcome.Candidates.class);
        // With the default 128 keys a call holds at most 128 * (255 + 64) bytes < 64 KiB; the byte bound
        // binds when an operator raises the key bound.
        IndexConfig d = IndexConfig.defaults();
        Fixture wide = new Fixture(new IndexConfig(d.indexBytesMax(), d.freshnessBudgetMs(), 256, d.lookupBytesMax(),
                d.replicasPerMediumMax(), d.cleanupBatchRowsMax(), d.diagnosticsPageSizeMax()));
        Namespace big = new Namespace(new byte[255]);
        List<StateKey> heavy = new ArrayList<>();
        for (int i = 0; i < 256; i++) {
            heavy.add(new StateKey(big, new byte[64]));
        }
        assertThat(wide.index.lookup(heavy)).isEqualTo(new LookupOutcome.Refused("bytes", 65536, 256L * (255 + 64)));
    }

    @Test
    @DisplayName("IDX-9 SNAP-11 IDX-10 at most 4 replicas per medium per key, fresh before stale; a truncated list is flagged")
    void replicasTruncatedPerMedium() {
        Fixture f = new Fixture(IndexConfig.defaults());
        Incarnation[] owners = new Incarnation[6];
        for (int i = 0; i < owners.length; i++) {
            owners[i] = Fixture.inc("n" + i, i + 100);
        }
        f.admit(owners);
        for (int i = 0; i < owners.length; i++) {
            List<ResidenceRecord> rows = i < 5
                    ? List.of(ResidenceRecord.put(Fixture.key("hot"), Medium.DRAM, 1, 1))
                    : List.of(ResidenceRecord.put(Fixture.key("hot"), Medium.DRAM, 1, 1),
                            ResidenceRecord.put(Fixture.key("hot"), Medium.SSD, 2, 1));
            f.install(owners[i], new UUID(i, 1), 2, rows);
        }
        LookupOutcome.Candidates c = (LookupOutcome.Candidates) f.index.lookup(List.of(Fixture.key("hot")));
        assertThat(c.keys().getFirst().truncated()).isTrue();
        assertThat(c.keys().getFirst().replicas()).filteredOn(r -> r.medium() == Medium.DRAM).hasSize(4);
        assertThat(c.keys().getFirst().replicas()).filteredOn(r -> r.medium() == Medium.SSD).hasSize(1);
        assertThat(c.coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        // Fresh evidence first: owners 4 and 5 stay fresh, 0..3 pass the freshness budget.
        f.clock.addAndGet(6_000_000_000L);
        f.index.observeLiveness(owners[4], 9);
        f.index.observeLiveness(owners[5], 9);
        LookupOutcome.Candidates mixed = (LookupOutcome.Candidates) f.index.lookup(List.of(Fixture.key("hot")));
        assertThat(mixed.keys().getFirst().replicas()).filteredOn(r -> r.medium() == Medium.DRAM)
                .extracting(r -> r.owner(), r -> r.stale())
                .containsExactly(org.assertj.core.groups.Tuple.tuple(owners[4], false),
                        org.assertj.core.groups.Tuple.tuple(owners[5], false),
                        org.assertj.core.groups.Tuple.tuple(owners[0], true),
                        org.assertj.core.groups.Tuple.tuple(owners[1], true));
        assertThat(mixed.keys().getFirst().truncated()).isTrue();
        assertThat(mixed.coverage()).isEqualTo(Coverage.PartialHints);
    }

    @Test
    @DisplayName("IDX-7 IDX-8 out-of-scope namespace and suspended membership are Unavailable; view generation advances")
    void unavailableStates() {
        Fixture f = new Fixture(IndexConfig.defaults());
        f.admit(A);
        f.install(A, new UUID(1, 1), 1, List.of(ResidenceRecord.put(Fixture.key("k"), Medium.DRAM, 1, 1)));
        LookupOutcome.Candidates in = (LookupOutcome.Candidates) f.index.lookup(List.of(Fixture.key("k")));
        assertThat(in.coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        StateKey outside = new StateKey(Namespace.utf8("other"), new byte[] {1});
        LookupOutcome.Candidates out = (LookupOutcome.Candidates) f.index.lookup(List.of(Fixture.key("k"), outside));
        assertThat(out.coverage()).isEqualTo(Coverage.Unavailable);
        assertThat(out.keys().getFirst().replicas()).hasSize(1);
        f.index.applyDelta(A, new UUID(1, 1), 5, Interval.of(1, 2), List.of());
        LookupOutcome.Candidates after = (LookupOutcome.Candidates) f.index.lookup(List.of(Fixture.key("k")));
        assertThat(after.viewGeneration()).isGreaterThan(in.viewGeneration());
        f.suspend();
        LookupOutcome.Candidates s = (LookupOutcome.Candidates) f.index.lookup(List.of(Fixture.key("k")));
        assertThat(s.coverage()).isEqualTo(Coverage.Unavailable);
        assertThat(s.keys().getFirst().replicas()).isEmpty();
    }

    @Test
    @DisplayName("DIAG-1 IDX-8 per-owner status is paginated with a token and a bounded page size")
    void diagnosticsPagination() {
        Fixture f = new Fixture(IndexConfig.defaults());
        Incarnation[] owners = new Incarnation[5];
        for (int i = 0; i < owners.length; i++) {
            owners[i] = Fixture.inc("n" + i, i + 1);
        }
        f.admit(owners);
        f.install(owners[0], new UUID(9, 9), 42, Fixture.puts(3, 1));
        f.index.observeLiveness(owners[0], 77);
        f.clock.addAndGet(1_500_000_000L);
        List<OwnerViewStatus> all = new ArrayList<>();
        Optional<String> token = Optional.empty();
        int pages = 0;
        do {
            StatusPage p = f.index.ownerStatus(2, token);
            assertThat(p.owners().size()).isLessThanOrEqualTo(2);
            all.addAll(p.owners());
            token = p.nextPageToken();
            pages++;
        } while (token.isPresent());
        assertThat(pages).isEqualTo(3);
        assertThat(all).extracting(OwnerViewStatus::owner).containsExactly(owners);
        OwnerViewStatus first = all.getFirst();
        assertThat(first.state()).isEqualTo(OwnerState.INSTALLED);
        assertThat(first.viewId()).contains(new UUID(9, 9));
        assertThat(first.watermark()).isEqualTo(42);
        assertThat(first.sourceHead()).isEqualTo(77);
        assertThat(first.receiptAgeMs()).isEqualTo(1500);
        assertThat(first.rows()).isEqualTo(3);
        assertThat(first.bytes()).isEqualTo(3 * RowCost.bytes(7));
        assertThat(first.installedMonoNanos()).isEqualTo(1_000_000_000L);
        assertThat(first.installedSequence()).isEqualTo(42);
        // PERF-1: record-less progress advances the watermark but keeps the installation stamp.
        f.index.applyDelta(owners[0], new UUID(9, 9), 5, Interval.of(42, 50), List.of());
        OwnerViewStatus progressed = f.index.ownerStatus(1, Optional.empty()).owners().getFirst();
        assertThat(progressed.watermark()).isEqualTo(50);
        assertThat(progressed.installedSequence()).isEqualTo(42);
        assertThat(progressed.installedMonoNanos()).isEqualTo(1_000_000_000L);
        f.index.applyDelta(owners[0], new UUID(9, 9), 6, Interval.of(50, 51),
                List.of(ResidenceRecord.put(Fixture.key("z"), Medium.SSD, 51, 9)));
        OwnerViewStatus applied = f.index.ownerStatus(1, Optional.empty()).owners().getFirst();
        assertThat(applied.installedSequence()).isEqualTo(51);
        assertThat(applied.installedMonoNanos()).isEqualTo(2_500_000_000L);
        assertThat(first.scopeDigest()).contains(Fixture.SCOPE.digest());
        assertThat(all.get(1).state()).isEqualTo(OwnerState.AWAITING);
        assertThat(all.get(1).receiptAgeMs()).isEqualTo(-1);
        assertThatThrownBy(() -> f.index.ownerStatus(257, Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("owners limit must be 1..256");
        assertThatThrownBy(() -> f.index.ownerStatus(2, Optional.of("garbage")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("page token");
    }

    @Test
    @DisplayName("IDX-12 IDX-10 coverage degrades to PartialHints when receipt age passes the freshness budget")
    void freshnessBudget() {
        Fixture f = new Fixture(IndexConfig.defaults());
        f.admit(A, B);
        f.install(A, new UUID(1, 1), 1, List.of());
        assertThat(f.index.coverage()).isEqualTo(Coverage.PartialHints); // B has not answered (IDX-3)
        f.install(B, new UUID(2, 1), 1, List.of());
        assertThat(f.index.coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        f.clock.addAndGet(4_000_000_000L);
        f.index.observeLiveness(A, 1);
        f.clock.addAndGet(1_000_000_001L);
        assertThat(f.index.coverage()).as("B is 5001 ms old").isEqualTo(Coverage.PartialHints);
        f.index.observeLiveness(B, 1);
        assertThat(f.index.coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        f.clock.addAndGet(4_000_000_000L);
        assertThat(f.index.coverage()).as("A is now 5001 ms old").isEqualTo(Coverage.PartialHints);
    }

    @Test
    @DisplayName("BND-6 IndexConfig names the field and bound it refuses")
    void configValidation() {
        assertThatThrownBy(() -> IndexConfig.defaults().withIndexBytesMax(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("indexBytesMax must be > 0");
        assertThatThrownBy(() -> IndexConfig.defaults().withCleanupBatchRowsMax(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cleanupBatchRowsMax");
        assertThat(IndexConfig.defaults().indexBytesMax()).isEqualTo(256L << 20);
    }
}
