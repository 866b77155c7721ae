package orbitkv.server.tier;

import static orbitkv.server.tier.Payloads.key;
import static orbitkv.server.tier.Payloads.payload;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import orbitkv.inventory.Medium;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 33 findings "A full SSD directory gives 17 IO_ERROR refusals, no log line, sync 200 and health ok" and "A
 * --dram-dir tmpfs smaller than --dram is accepted" at the tier level (the real-tmpfs version with HTTP is
 * TierStorageFaultGateTest). An SSD write failure is simulated by removing the SSD directory under the running tier:
 * every write then fails with an I/O error, as on a full disk.
 */
@Tag("unit")
class TierStorageFaultsTest {
    @TempDir
    Path dir;

    private LocalTiers tiers;

    @AfterEach
    void close() throws Exception {
        if (tiers != null) {
            Files.createDirectories(dir.resolve("ssd"));
            tiers.close();
        }
    }

    private static void deleteTree(Path p) throws Exception {
        try (Stream<Path> all = Files.walk(p)) {
            for (Path f : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    @Test
    @DisplayName("issue 33 fullSsdDirectoryGivesIoErrorsNoLogSync200HealthOk: failed SSD writes are counted, make the tier degraded and the sync covering them fail")
    void fullSsdDirectoryGivesIoErrorsNoLogSync200HealthOk_ssdWriteFaultsAreVisible() throws Exception {
        RecordingListener listener = new RecordingListener();
        Path ssdDir = dir.resolve("ssd");
        SsdTier ssd = SsdTier.open(ssdDir, 8 << 20, 16, 64, 8 << 20, listener);
        tiers = new LocalTiers(DramTier.open(dir.resolve("dram"), 4 << 20, 16, listener), ssd, listener);
        assertThat(tiers.save(key(1), payload(1, 1, 4096))).isInstanceOf(SaveOutcome.Stored.class);
        assertThat(tiers.syncSubmittedSaves(60_000)).isEqualTo(new SsdTier.WritesAwaited(true, 0, null));
        assertThat(ssd.faults().current()).isEmpty();

        deleteTree(ssdDir); // every later block file fails to be created: an I/O error per write, like ENOSPC
        for (int i = 2; i <= 18; i++) {
            assertThat(tiers.save(key(i), payload(1, i, 4096))).as("DRAM saves still succeed").isInstanceOf(SaveOutcome.Stored.class);
        }
        SsdTier.WritesAwaited synced = tiers.syncSubmittedSaves(60_000);
        assertThat(synced.completed()).isTrue();
        assertThat(synced.failed()).as("a sync must not claim the failed SSD writes").isEqualTo(17);
        assertThat(synced.lastFailure()).contains(ssdDir.toString());
        assertThat(ssd.counters().refusedTotal(TierRefusal.IO_ERROR)).isEqualTo(17);
        assertThat(ssd.faults().faultsTotal()).isEqualTo(17);
        TierFaults.Fault fault = ssd.faults().current().orElseThrow();
        assertThat(fault.reason()).isEqualTo(TierRefusal.IO_ERROR);
        assertThat(fault.faultsSinceOk()).isEqualTo(17);
        // A later sync still sees the tier failing (its last write failed): it does not answer success either.
        assertThat(tiers.syncSubmittedSaves(60_000).failed()).isEqualTo(17);

        Files.createDirectories(ssdDir); // room again: the next write succeeds and ends the degraded state
        assertThat(tiers.save(key(40), payload(1, 40, 4096))).isInstanceOf(SaveOutcome.Stored.class);
        assertThat(tiers.syncSubmittedSaves(60_000)).isEqualTo(new SsdTier.WritesAwaited(true, 0, null));
        assertThat(ssd.faults().current()).isEmpty();
        assertThat(ssd.faults().faultsTotal()).isEqualTo(17);
    }

    @Test
    @DisplayName("issue 33: a storm of tier write faults logs one line per interval with the count, and one line when writes succeed again")
    void faultLogIsRateLimitedWithACount() {
        AtomicLong clock = new AtomicLong(0);
        List<String> warn = new ArrayList<>();
        List<String> info = new ArrayList<>();
        TierFaults faults = new TierFaults(Medium.SSD, clock::get, warn::add, info::add);
        for (int i = 0; i < 1000; i++) {
            faults.fault(TierRefusal.IO_ERROR, "writing blk-" + i + ": No space left on device");
            clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        }
        assertThat(warn).hasSize(1); // 1 s of faults: the first one only
        assertThat(warn.getFirst()).contains("SSD tier write failed (IO_ERROR)", "blk-0", "1 failure since");
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(TierFaults.LOG_INTERVAL_MS));
        faults.fault(TierRefusal.IO_ERROR, "writing blk-x: No space left on device");
        assertThat(warn).hasSize(2);
        assertThat(warn.get(1)).contains("1000 failures since the last such line, 1001 in all");
        faults.writeSucceeded();
        faults.writeSucceeded();
        assertThat(info).hasSize(1);
        assertThat(info.getFirst()).contains("SSD tier writes succeed again after 1001 failures");
        assertThat(faults.current()).isEmpty();
        faults.fault(TierRefusal.IO_ERROR, "again");
        assertThat(warn).as("a new episode is logged at once").hasSize(3);
    }

    @Test
    @DisplayName("issue 33 dramDirSmallerThanDramAccepted: the start refuses a --dram-dir with less usable space than --dram plus the restore arena, naming both sizes")
    void dramDirSmallerThanDramAccepted_startRefusesNamingBothSizes() throws Exception {
        Path shm = Files.createDirectory(dir.resolve("shm"));
        assertThat(TierSpace.dramRefusal(shm, 16L << 20, 1L << 20, p -> 8L << 20)).hasValueSatisfying(m -> assertThat(m)
                .contains("--dram-dir " + shm, "has 8.0 MiB usable", "--dram (16.0 MiB)",
                        "--restore-bytes-in-flight-max (1.0 MiB)", "need 17.0 MiB"));
        assertThat(TierSpace.dramRefusal(shm, 6L << 20, 1L << 20, p -> 8L << 20)).isEmpty();
        assertThat(TierSpace.dramRefusal(shm, 7L << 20, 1L << 20, p -> 8L << 20)).as("exactly enough").isEmpty();
        assertThat(TierSpace.ssdShortfall(shm, 64L << 20, p -> 1L << 20)).hasValueSatisfying(m -> assertThat(m)
                .contains("--ssd-dir", "1.0 MiB usable", "--ssd (64.0 MiB)"));
    }

    @Test
    @DisplayName("issue 33: stale arenas of dead Managers are reclaimed before the space is measured")
    void staleArenasReclaimedBeforeTheSpaceCheck() throws Exception {
        Path shm = Files.createDirectory(dir.resolve("shm"));
        Path stale = shm.resolve(DramTier.ARENA_PREFIX + "dead-1" + DramTier.ARENA_SUFFIX);
        Files.write(stale, new byte[4096]);
        assertThat(TierSpace.dramRefusal(shm, 1 << 20, 1 << 20, p -> Long.MAX_VALUE)).isEmpty();
        assertThat(stale).doesNotExist();
    }
}
