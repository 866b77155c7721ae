package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.index.LookupOutcome;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SnapshotScan;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * INV-1: metadata transport never blocks saving or eviction. Every kind of reader holds what it can hold at
 * once, each on its own thread: a snapshot scan parked between two pages, a session stalled mid-bootstrap
 * at its credit window (its source pump waits for credit), and a reader spinning over the journal. While
 * they hold, the writer (on the test thread, under a hard time bound) records 5,000 mutations, each with
 * the next contiguous sequence, and the stalled requester's index answers lookups while its session waits on
 * the network (DELTA-4). Then the holds are checked to have still been in effect, and released.
 */
@Tag("gate")
class WriterProgressTest {
    static final int WINDOW_BYTES = 2 << 10;
    static final Duration WRITER_BOUND = Duration.ofSeconds(30);

    @Test
    @DisplayName("INV-1 BND-5 DELTA-4 a parked snapshot scan, a stalled session and a spinning reader never block puts and deletes; the stalled requester's index answers lookups")
    void writerProgressesWhileReadersHold() throws Exception {
        var session = SessionWorld.fastConfig().withFrameBytesMax(1 << 10, 4 << 10).withReceiveWindowBytes(WINDOW_BYTES);
        var inventory = InventoryConfig.defaults().withFrameEncodedBytesMax(1 << 10).withFrameDecodedBytesMax(4 << 10)
                .withPageRecordsMax(4).withJournalRecordsMax(20_000);
        try (SessionWorld w = new SessionWorld(session, inventory)) {
            SessionWorld.SourceNode s = w.addSource("src", 1);
            for (int i = 0; i < 600; i++) {
                s.put(SessionWorld.key(i % 3, i % 64), i % 2 == 0 ? Medium.DRAM : Medium.SSD, i);
            }
            // Hold 1: a reader spinning over the journal.
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong reads = new AtomicLong();
            Thread spinner = Thread.ofPlatform().name("spinning-reader").start(() -> {
                while (!stop.get()) {
                    ReadOutcome o = s.source.read(0, Scope.all(), 4);
                    assertThat(o).isNotNull();
                    reads.incrementAndGet();
                }
            });
            SessionWorld.await("the spinning reader runs", Duration.ofSeconds(10), () -> reads.get() > 0);
            // Hold 2: a snapshot scan parked between pages on its own thread.
            CountDownLatch scanParked = new CountDownLatch(1);
            CountDownLatch releaseScan = new CountDownLatch(1);
            CompletableFuture<SnapshotScan.ScanStep> scanAfterWrites = CompletableFuture.supplyAsync(() -> {
                SnapshotScan scan = s.source.openSnapshot(Scope.all());
                assertThat(scan.nextPage()).isInstanceOf(SnapshotScan.ScanStep.Page.class);
                scanParked.countDown();
                try {
                    releaseScan.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return scan.nextPage(); // a page, or aborted trimmed (BND-5): never a blocked writer
            }, r -> Thread.ofPlatform().name("parked-scan").start(r));
            assertThat(scanParked.await(10, TimeUnit.SECONDS)).as("the scan parked between pages").isTrue();
            // Hold 3: a stalled session, its bootstrap far larger than the 2 KiB window.
            SessionWorld.RequesterNode stalled = w.addRequester("req-stalled", Scope.all());
            w.publishMembership();
            SessionWorld.await("a session opened", Duration.ofSeconds(10), () -> !s.server.status().isEmpty());
            s.proxy.stall(true);
            assertTimeoutPreemptively(WRITER_BOUND, () -> {
                long expect = s.source.headSequence();
                for (int i = 0; i < 5_000; i++) {
                    var key = SessionWorld.key(i % 3, (i * 7) % 64);
                    long seq = i % 5 == 4 ? s.delete(key, Medium.DRAM) : s.put(key, Medium.DRAM, i);
                    if (seq > 0) { // a delete of a non-resident residence records nothing
                        assertThat(seq).as("mutation %d takes the next sequence", i).isEqualTo(++expect);
                    }
                }
                assertThat(s.source.headSequence()).isEqualTo(expect);
                // DELTA-4: the stalled requester's session waits on the network mid-bootstrap; its index answers.
                for (int i = 0; i < 100; i++) {
                    assertThat(stalled.index.lookup(List.of(SessionWorld.key(i % 3, i % 64))))
                            .isInstanceOf(LookupOutcome.Candidates.class);
                }
            }, "INV-1 DELTA-4: the writer (and lookups at the stalled requester) must finish while the readers hold");

            // The holds were still in effect when the writer finished.
            assertThat(scanAfterWrites).as("the parked scan had not continued").isNotDone();
            assertThat(SessionWorld.cursor(stalled, s).map(c -> c.watermark()).orElse(-1L)).as("the stalled requester is behind")
                    .isLessThan(s.source.headSequence());
            assertThat(spinner.isAlive()).isTrue();
            stop.set(true);
            spinner.join(10_000);
            releaseScan.countDown();
            assertThatNoException().isThrownBy(() -> scanAfterWrites.get(10, TimeUnit.SECONDS));
            s.proxy.stall(false);
            w.awaitConvergedAndCompare(Duration.ofSeconds(30), () -> "after the holds are released");
        }
    }
}
