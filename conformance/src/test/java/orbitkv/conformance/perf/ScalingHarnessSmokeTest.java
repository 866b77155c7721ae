package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The default run's smoke of the scaling matrix harness (so it cannot rot), with real etcd, a real requester Manager
 * and real loopback InventorySessions. Two tiny cells beyond the configured envelope: 64 peers against
 * {@code --peer-sessions-max 48} (BND-3 at 64 peers: 48 sessions, the other 16 admitted peers listed in
 * {@code beyond_limit}, capacity incomplete, {@code /health} degraded, coverage PartialHints, nobody skipped; the harness
 * throws {@link ScalingHarness.EnvelopeViolation} otherwise); and, with a scoped requester and constant updates, owner
 * views beyond {@code --index-budget-bytes} (owner state WITHDRAWN, coverage PartialHints). It checks what every cell
 * must collect, not figures. The formal matrix is {@code scripts/bench scaling}.
 */
@Tag("gate")
class ScalingHarnessSmokeTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    @DisplayName("BND-3 SNAP-12 DIAG-3 PERF-1 the scaling harness collects exact samples and per-session, index, CPU/RSS and etcd figures, "
            + "and reports refusals beyond the envelope (64 peers over --peer-sessions-max 48; the index budget) as refusals")
    void smoke() throws Exception {
        ScalingHarness.Cell sessions = new ScalingHarness.Cell("envelope", "64 peers over 48 sessions", 64, 16, ScalingHarness.Updates.BURSTY, 50, 2,
                false, 48, 0, ScalingHarness.Envelope.BEYOND_SESSIONS);
        ScalingHarness.Cell budget = new ScalingHarness.Cell("envelope", "4 x 4,000 residences (2,000 in scope) over 512 KiB, scoped, constant", 4, 4_000,
                ScalingHarness.Updates.CONSTANT, 90, 2, true, 0, 512L << 10, ScalingHarness.Envelope.BEYOND_INDEX_BUDGET);
        ScalingHarness.Settings s = new ScalingHarness.Settings(List.of(sessions, budget), 4, 10, 20, 4, 20, 1, 0, 2, 90);
        BenchRun run = BenchRun.create("scaling-smoke");
        Path work = Files.createTempDirectory("orbitkv-scaling-smoke-");
        try {
            List<ScalingHarness.Result> results = new ScalingHarness(s, run, ETCD, work).run();
            assertThat(results).hasSize(2);
            for (ScalingHarness.Result r : results) {
                assertThat(r.visibilityNs().length).as(r.cell().label()).isGreaterThanOrEqualTo(s.samples());
                assertThat(java.util.Arrays.stream(r.visibilityNs()).min().orElse(0)).as(r.cell().label() + ": install after publication").isPositive();
                assertThat(r.sessionBytesPerS()[0]).as(r.cell().label() + " per-session bytes").isPositive();
                assertThat(r.sessionFramesPerS()[0]).as(r.cell().label() + " per-session frames").isPositive();
                assertThat(r.requesterBytesPerS()).as(r.cell().label() + " requester bytes").isPositive();
                assertThat(r.indexBytes()).isPositive();
                assertThat(r.indexPeakBytes()).isGreaterThanOrEqualTo(r.indexBytes());
                assertThat(r.indexRows()).isPositive();
                assertThat(r.creditPeakBytes()).isPositive();
                assertThat(r.journalPeakBytes()).isPositive();
                assertThat(r.filterCpuCoresBusy()).isGreaterThanOrEqualTo(0);
                assertThat(r.processes()).hasSize(3).allSatisfy(p -> {
                    assertThat(p.coreSeconds()).isGreaterThanOrEqualTo(0);
                    assertThat(p.rssBytes()).isPositive();
                    assertThat(p.rssPeakBytes()).isGreaterThanOrEqualTo(p.rssBytes());
                });
                assertThat(r.etcd().messagesByMethodPerS()).as("no block keys in etcd").doesNotContainKey("Txn");
            }
            // Renewals are sampled where the window must hold some: 65 members each renew several times per lease
            // TTL, while the 5 members of the 1 s budget cell may renew zero times inside its window.
            assertThat(results.get(0).etcd().messagesByMethodPerS()).as("members renew leases").containsKey("LeaseKeepAlive");
            ScalingHarness.Refusal bnd3 = results.get(0).refusal();
            assertThat(bnd3.kind()).isEqualTo(ScalingHarness.Envelope.BEYOND_SESSIONS);
            assertThat(bnd3.admitted()).isEqualTo(64);
            assertThat(bnd3.served()).isEqualTo(48);
            assertThat(bnd3.refusedPeers()).hasSize(16).doesNotHaveDuplicates();
            assertThat(bnd3.coverage()).isEqualTo("PartialHints");
            assertThat(bnd3.health()).isEqualTo("degraded");
            ScalingHarness.Refusal idx = results.get(1).refusal();
            assertThat(idx.kind()).isEqualTo(ScalingHarness.Envelope.BEYOND_INDEX_BUDGET);
            assertThat(idx.refusedPeers()).isNotEmpty();
            assertThat(idx.served()).isPositive();
            assertThat(idx.coverage()).isEqualTo("PartialHints");
            assertThat(results.get(1).indexPeakBytes()).as("the budget holds at its peak").isLessThanOrEqualTo(512L << 10);
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }
}
