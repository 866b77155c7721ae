package orbitkv.conformance.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.ResidenceOrder;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.SnapshotScan.ReplayStep;
import orbitkv.inventory.SnapshotScan.ScanStep;
import orbitkv.testing.TableRows;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/** Runs {@code tables/inventory/snapshot-scan.table}: deterministic interleavings of scan steps and mutations. */
@Tag("unit")
class SnapshotScanTableTest {
    @TestFactory
    @DisplayName("SNAP-1 SNAP-2 SNAP-3 SNAP-4 SNAP-9 snapshot scan table")
    Stream<DynamicTest> rows() throws IOException {
        return TableSyntax.rows("snapshot-scan.table", 5).stream().map(row -> DynamicTest.dynamicTest(row.name(), () -> run(row)));
    }

    /** The state a script builds while it runs. */
    static final class Run {
        final InventorySource source;
        final ResidenceModel model = new ResidenceModel();
        final SnapshotScan scan;
        final ResidenceModel.View view = new ResidenceModel.View(Map.of());
        ResidenceRecord lastScanned;
        long pages;
        long s1 = -1;
        long scanned;
        long maxSeq;
        long replayCursor;
        boolean complete;
        SnapshotScan.SnapshotAbortCause aborted;

        Run(InventorySource source, List<TableSyntax.Mutation> setup, Scope scope) {
            this.source = source;
            for (TableSyntax.Mutation m : setup) {
                SourceIntervalTableTest.apply(source, model, m);
            }
            this.scan = source.openSnapshot(scope);
            this.replayCursor = scan.s0();
        }

        void page() {
            ScanStep step = scan.nextPage();
            assertThat(step).isInstanceOf(ScanStep.Page.class);
            ScanStep.Page page = (ScanStep.Page) step;
            assertThat(page.ordinal()).as("page ordinal").isEqualTo(++pages);
            assertThat(page.records()).as("a page is never empty").isNotEmpty();
            for (ResidenceRecord r : page.records()) {
                assertThat(scan.scope().contains(r.key().namespace())).as("subscribed namespaces only").isTrue();
                assertThat(lastScanned == null || ResidenceOrder.compare(lastScanned, r) < 0).as("strictly increasing cursor").isTrue();
                assertThat(r).as("real sequence of the current residence").isEqualTo(model.current(r.key(), r.medium()));
                lastScanned = r;
                maxSeq = Math.max(maxSeq, r.sequence());
                view.rows.put(new ResidenceModel.Residence(r.key(), r.medium()), r);
            }
            scanned += page.records().size();
        }

        void end() {
            ScanStep step = scan.nextPage();
            assertThat(step).isInstanceOf(ScanStep.ScanEnd.class);
            ScanStep.ScanEnd end = (ScanStep.ScanEnd) step;
            s1 = end.s1();
            assertThat(s1).as("S1 is the head after the last page").isEqualTo(model.head());
            assertThat(end.pageCount()).isEqualTo(pages);
            assertThat(end.maxScannedSequence()).isEqualTo(maxSeq);
            assertThat(end.scannedRecords()).isEqualTo(scanned);
        }

        void replay(int intervalsMax) {
            ReplayStep step = scan.nextReplay(intervalsMax);
            if (step instanceof ReplayStep.Aborted a) {
                aborted = a.cause();
                return;
            }
            ReplayStep.Replay replay = (ReplayStep.Replay) step;
            assertThat(replay.intervals().size()).isLessThanOrEqualTo(intervalsMax);
            for (CoalescedInterval ci : replay.intervals()) {
                assertThat(ci.interval().from()).as("contiguous replay from S0").isEqualTo(replayCursor);
                view.applyByVersion(ci);
                replayCursor = ci.interval().to();
            }
            complete = replay.complete();
            assertThat(complete).isEqualTo(replayCursor == s1);
        }
    }

    private static void run(TableRows.Row row) {
        InventorySource source = InventorySource.create(TableSyntax.config(row.column(0)));
        Run run = new Run(source, TableSyntax.mutations(row.column(1)), TableSyntax.scope(row.column(2)));
        for (String raw : row.column(3).split(";")) {
            String step = raw.strip();
            if (TableSyntax.isMutation(step)) {
                for (TableSyntax.Mutation m : TableSyntax.mutation(step)) {
                    SourceIntervalTableTest.apply(source, run.model, m);
                }
                continue;
            }
            switch (step) {
                case "page" -> run.page();
                case "end" -> run.end();
                case "page-aborted" -> {
                    ScanStep s = run.scan.nextPage();
                    assertThat(s).isInstanceOf(ScanStep.Aborted.class);
                    run.aborted = ((ScanStep.Aborted) s).cause();
                }
                case "replay" -> run.replay(1_000_000);
                case "replay1" -> run.replay(1);
                default -> throw new IllegalArgumentException("unknown script step " + step);
            }
        }
        for (String token : row.column(4).split("\\s+")) {
            String[] kv = token.split("=");
            switch (kv[0]) {
                case "pages" -> assertThat(run.pages).as(token).isEqualTo(Long.parseLong(kv[1]));
                case "s0" -> assertThat(run.scan.s0()).as(token).isEqualTo(Long.parseLong(kv[1]));
                case "s1" -> assertThat(run.s1).as(token).isEqualTo(Long.parseLong(kv[1]));
                case "maxseq" -> assertThat(run.maxSeq).as(token).isEqualTo(Long.parseLong(kv[1]));
                case "scanned" -> assertThat(run.scanned).as(token).isEqualTo(Long.parseLong(kv[1]));
                case "equals-s1" -> {
                    assertThat(run.aborted).as("not aborted").isNull();
                    assertThat(run.complete).as("replay reached S1").isTrue();
                    assertThat(run.view.rows).as("pages + replay == resident map at S1")
                            .isEqualTo(run.model.mapAt(run.s1, run.scan.scope()));
                }
                default -> {
                    assertThat(token).startsWith("aborted(");
                    assertThat(run.aborted).as(token).isEqualTo(
                            SnapshotScan.SnapshotAbortCause.valueOf(token.substring(8, token.length() - 1)));
                }
            }
        }
    }
}
