package orbitkv.server.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import orbitkv.index.Coverage;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.config.SpeculationOptions;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.testing.Await;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.GrantRequest;
import orbitkv.transfer.Intent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Declared-demand prefetch (ROUTE-13) against a fake transfer engine and real DRAM tiers: Authorize with
 * INTENT_PREFETCH, at most 5 % of the receive window held by speculation, one job per peer, no job while a restore
 * runs, the queue bound refused by name, a block beyond the budget refused by name, and prefetched blocks counted used
 * when a restore serves them locally or wasted when evicted unused.
 */
@Tag("unit")
@Timeout(120)
class PrefetcherTest {
    private static final Namespace NS = Namespace.utf8("ns");
    private static final int SIZE = 1000;
    private static final Duration BOUND = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private LocalTiers tiers;
    private final FakeEngine engine = new FakeEngine();
    private final List<GrantRequest> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger authorizing = new AtomicInteger();
    private final AtomicInteger authorizingPeak = new AtomicInteger();
    private final RouteSelection routes = RouteSelection.create(RoutePolicy.defaults());
    private Speculation speculation;

    @BeforeEach
    void open() throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 256 * 1024, 64, sequence), null, sequence, new CopyOutBudget(1 << 20));
        engine.authorize = r -> {
            authorizingPeak.accumulateAndGet(authorizing.incrementAndGet(), Math::max);
            requests.add(r);
            authorizing.decrementAndGet();
            return new AuthorizeOutcome.Granted(FakeEngine.grant(r.blocks().stream()
                    .map(b -> (BlockResult) new BlockResult.Granted(b, SIZE, 0)).toList()));
        };
    }

    @AfterEach
    void close() throws Exception {
        if (speculation != null) {
            speculation.close();
        }
        tiers.close();
        routes.close();
    }

    private static StateKey key(int i) {
        return new StateKey(NS, new byte[] {(byte) (i >> 8), (byte) i});
    }

    private static List<StateKey> keys(int from, int n) {
        List<StateKey> out = new ArrayList<>();
        for (int i = from; i < from + n; i++) {
            out.add(key(i));
        }
        return out;
    }

    /** Every key has one fresh replica on the fake source; the receive window is {@code window} bytes. */
    private RestoreView view(long window) {
        RestoreTransfer t = engine.transfer(window, 4, true);
        return new RestoreView() {
            @Override
            public IndexEvidence evidence(Namespace namespace, List<StateKey> k) {
                List<List<Replica>> r = new ArrayList<>();
                for (int i = 0; i < k.size(); i++) {
                    r.add(List.of(new Replica(FakeEngine.SOURCE, Medium.DRAM, 7, SIZE, false)));
                }
                return new IndexEvidence(Coverage.CompleteAtWatermarks, 1, r, Collections.nCopies(k.size(), false));
            }

            @Override
            public Optional<RestoreTransfer> transfer() {
                return Optional.of(t);
            }
        };
    }

    private Speculation speculation(int queued) {
        speculation = new Speculation(tiers, new SpeculationOptions(10, queued), UnpooledByteBufAllocator.DEFAULT);
        return speculation;
    }

    @Test
    @DisplayName("ROUTE-13 INV-2 prefetch Authorizes with INTENT_PREFETCH, keeps the verified blocks; a local restore uses them")
    void prefetchedThenUsed() {
        Speculation s = speculation(1024);
        engine.autoComplete = true;
        RestoreView view = view(1 << 20);
        Map<Prefetcher.KeyOutcome, Integer> out = s.prefetch(new PrefetchRequest(NS, keys(0, 3), 30_000), view);
        assertThat(out).containsEntry(Prefetcher.KeyOutcome.ACCEPTED, 3);
        Await.inJvm("three blocks prefetched", BOUND, () -> s.figures().prefetchedBlocks() == 3);
        assertThat(requests).isNotEmpty().allMatch(r -> r.intent() == Intent.PREFETCH);
        assertThat(tiers.residences(key(2))).hasSize(1);
        assertThat(s.prefetch(new PrefetchRequest(NS, keys(0, 1), 30_000), view))
                .as("already local: not queued again").containsEntry(Prefetcher.KeyOutcome.LOCAL, 1);

        RestoreResult r = new Restoration(tiers, view, routes, 1 << 20, UnpooledByteBufAllocator.DEFAULT,
                new RestoreRequest(NS, keys(0, 2), 30_000)).with(s).run();
        assertThat(r.restoredKeys()).isEqualTo(2);
        assertThat(r.routeHeader()).contains("local-dram");
        r.release();
        Speculation.Figures f = s.figures();
        assertThat(f.usedBlocks()).isEqualTo(2);
        assertThat(f.usedBytes()).isEqualTo(2L * SIZE);
        tiers.evict(key(2), LocalTiers.EvictTarget.ALL);
        assertThat(s.figures().wastedBlocks()).as("evicted before any use").isEqualTo(1);
        assertThat(s.figures().tracked()).isZero();
    }

    @Test
    @DisplayName("ROUTE-13 INV-9 speculation holds at most 5 % of the receive window, one job per peer, in batches that fit it")
    void boundedByFivePercent() {
        Speculation s = speculation(1024);
        engine.autoComplete = true;
        long window = 100_000; // 5 %: 5,000 bytes, five blocks
        s.prefetch(new PrefetchRequest(NS, keys(0, 20), 30_000), view(window));
        Await.inJvm("twenty blocks prefetched", BOUND, () -> s.figures().prefetchedBlocks() == 20);
        assertThat(s.figures().prefetch().budgetBytesMax()).isEqualTo(5_000);
        assertThat(requests).allMatch(r -> r.blocks().size() * (long) SIZE <= 5_000);
        assertThat(requests).hasSize(4);
        assertThat(authorizingPeak.get()).as("one job per peer").isEqualTo(1);
        assertThat(s.figures().prefetch().budgetHeldBytes()).isZero();
    }

    @Test
    @DisplayName("ROUTE-13 no prefetch job starts while a restore runs; the queue waits and goes on when demand ends")
    void demandStopsSpeculation() {
        Speculation s = speculation(1024);
        engine.autoComplete = true;
        s.demandBegins();
        s.prefetch(new PrefetchRequest(NS, keys(0, 4), 30_000), view(1 << 20));
        assertThat(s.figures().prefetch().jobsStarted()).as("demand runs: nothing started").isZero();
        assertThat(requests).isEmpty();
        assertThat(s.figures().prefetch().keysPending()).isEqualTo(4);
        s.demandEnds();
        Await.inJvm("four blocks prefetched", BOUND, () -> s.figures().prefetchedBlocks() == 4);
    }

    @Test
    @DisplayName("ROUTE-13 INV-8 a restore arriving stops new speculation while the submitted batch drains: its READs end, its grant is released")
    void submittedWorkDrains() {
        Speculation s = speculation(1024);
        s.prefetch(new PrefetchRequest(NS, keys(0, 10), 30_000), view(100_000)); // batches of five
        Await.inJvm("the first READ submitted", BOUND, () -> engine.readsSubmitted() == 1);
        s.demandBegins();
        for (int i = 0; i < 5; i++) {
            int n = i + 1;
            Await.inJvm("READ " + n + " of the submitted batch", BOUND, () -> engine.readsSubmitted() == n);
            engine.read(i).complete((byte) 1);
        }
        Await.inJvm("the batch drained and the job paused", BOUND, () -> s.figures().prefetch().paused() == 1
                && s.figures().prefetch().jobsRunning() == 0);
        assertThat(s.figures().prefetchedBlocks()).as("the submitted batch completed").isEqualTo(5);
        assertThat(engine.released.get()).as("its grant released").isEqualTo(1);
        assertThat(requests).as("no second batch while demand runs").hasSize(1);
        assertThat(s.figures().prefetch().budgetHeldBytes()).isZero();
        engine.autoComplete = true;
        s.demandEnds();
        Await.inJvm("the rest prefetched after demand", BOUND, () -> s.figures().prefetchedBlocks() == 10);
    }

    @Test
    @DisplayName("ROUTE-13 INV-9 beyond --prefetch-keys-queued-max the rest is refused (queue-full); a key queued twice is a duplicate")
    void queueBound() {
        Speculation s = speculation(2);
        s.demandBegins(); // nothing runs: the queue holds what was accepted
        Map<Prefetcher.KeyOutcome, Integer> out = s.prefetch(new PrefetchRequest(NS, keys(0, 3), 30_000), view(1 << 20));
        assertThat(out).containsEntry(Prefetcher.KeyOutcome.ACCEPTED, 2).containsEntry(Prefetcher.KeyOutcome.QUEUE_FULL, 1);
        assertThat(s.prefetch(new PrefetchRequest(NS, keys(0, 1), 30_000), view(1 << 20)))
                .containsEntry(Prefetcher.KeyOutcome.DUPLICATE, 1);
        assertThat(s.figures().prefetch().keys().get(Prefetcher.KeyOutcome.QUEUE_FULL)).isEqualTo(1);
        s.demandEnds();
    }

    @Test
    @DisplayName("ROUTE-13 a block larger than 5 % of the receive window is refused by name, never fetched")
    void blockBeyondTheBudget() {
        Speculation s = speculation(1024);
        engine.autoComplete = true;
        s.prefetch(new PrefetchRequest(NS, keys(0, 1), 30_000), view(10_000)); // 5 %: 500 bytes < 1000
        Await.inJvm("refused", BOUND,
                () -> s.figures().prefetch().refusals().get(Prefetcher.Refusal.BLOCK_EXCEEDS_BUDGET) == 1);
        assertThat(requests).isEmpty();
        assertThat(tiers.residences(key(0))).isEmpty();
    }

    @Test
    @DisplayName("ROUTE-13 a Manager without transfer (standalone) queues nothing")
    void standalone() {
        Speculation s = speculation(1024);
        RestoreView none = new RestoreView() {
            @Override
            public IndexEvidence evidence(Namespace namespace, List<StateKey> k) {
                return IndexEvidence.none(Coverage.Unavailable, 0, k.size());
            }

            @Override
            public Optional<RestoreTransfer> transfer() {
                return Optional.empty();
            }
        };
        assertThat(s.prefetch(new PrefetchRequest(NS, keys(0, 2), 30_000), none))
                .containsEntry(Prefetcher.KeyOutcome.STANDALONE, 2);
        assertThat(s.figures().prefetch().keysPending()).isZero();
    }
}
