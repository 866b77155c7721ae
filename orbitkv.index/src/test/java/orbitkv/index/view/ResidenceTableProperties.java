package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThat;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.Scope;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import orbitkv.testing.SeededTries;

/** The open-addressing row table against a HashMap model: insert, overwrite, backward-shift removal. */
@Tag("unit")
class ResidenceTableProperties {
    record Op(int key, int tag, boolean remove, long seq) {
    }

    static List<Op> ops(SeededTries.Gen g) {
        return g.list(0, 400, x -> new Op(x.intIn(0, 200), x.intIn(0, 3), x.bool(), x.longIn(1, 1_000)));
    }

    static byte[] key(int k) {
        return ByteBuffer.allocate(4).putInt(k).array();
    }

    @Test
    @DisplayName("the row table matches a HashMap model under insert, overwrite and removal (2,000 seeded tries)")
    void tableMatchesModel() {
        SeededTries.run("tableMatchesModel", 2000, 4242L, ResidenceTableProperties::ops, ResidenceTableProperties::tableMatchesModel);
    }

    private static void tableMatchesModel(List<Op> ops) {
        ResidenceTable t = new ResidenceTable(0);
        Map<String, Long> model = new HashMap<>();
        for (Op op : ops) {
            byte[] k = key(op.key());
            int h = ResidenceTable.hash(op.tag(), k);
            int slot = t.find(op.tag(), k, h);
            String id = op.key() + "/" + op.tag();
            assertThat(slot >= 0).isEqualTo(model.containsKey(id));
            if (op.remove()) {
                if (slot >= 0) {
                    t.removeAt(slot);
                    model.remove(id);
                }
            } else if (slot >= 0) {
                t.overwrite(slot, op.seq(), op.seq() % 3 == 0 ? ResidenceTable.TOMBSTONE : 7);
                model.put(id, op.seq());
            } else {
                if (t.needsGrowth(1)) {
                    t = t.grownCopy(1);
                }
                t.insert(op.tag(), k, h, op.seq(), op.seq() % 3 == 0 ? ResidenceTable.TOMBSTONE : 7);
                model.put(id, op.seq());
            }
        }
        assertThat(t.size()).isEqualTo(model.size());
        for (Map.Entry<String, Long> e : model.entrySet()) {
            String[] p = e.getKey().split("/");
            byte[] k = key(Integer.parseInt(p[0]));
            int tag = Integer.parseInt(p[1]);
            int slot = t.find(tag, k, ResidenceTable.hash(tag, k));
            assertThat(slot).isNotNegative();
            assertThat(t.sequenceAt(slot)).isEqualTo(e.getValue());
        }
        // Commit compaction removes exactly the tombstones and keeps every other row findable.
        long tombstones = model.values().stream().filter(s -> s % 3 == 0).count();
        int before = t.size();
        t.removeTombstones();
        assertThat(t.size()).isEqualTo(before - tombstones);
        for (Map.Entry<String, Long> e : model.entrySet()) {
            String[] p = e.getKey().split("/");
            byte[] k = key(Integer.parseInt(p[0]));
            int tag = Integer.parseInt(p[1]);
            assertThat(t.find(tag, k, ResidenceTable.hash(tag, k)) >= 0).isEqualTo(e.getValue() % 3 != 0);
        }
    }

    /**
     * Distinct page rows (strictly increasing keys, as SNAP-2 guarantees for staged pages) split into pages of
     * random sizes.
     */
    static List<PreparedFrame> pages(int rows, Random random) {
        Namespace ns = Namespace.utf8("ns-bulk");
        NamespaceTable namespaces = new NamespaceTable();
        List<PreparedFrame> pages = new ArrayList<>();
        int key = 0;
        for (int done = 0; done < rows;) {
            int n = Math.min(rows - done, 1 + random.nextInt(3_000));
            RecordBatch.Builder b = RecordBatch.builder(n);
            int j = b.namespace(ns);
            for (int i = 0; i < n; i++) {
                key += 1 + random.nextInt(3);
                byte[] k = ByteBuffer.allocate(8).putLong(key).array();
                b.add(j, k, 0, k.length, random.nextBoolean() ? Medium.DRAM : Medium.SSD, false, 1 + random.nextInt(1 << 20),
                        random.nextInt(1 << 16));
            }
            PreparedFrame page = PreparedFrame.page(b.build(), Scope.all(), namespaces);
            assertThat(page.rejected()).isNull();
            pages.add(page);
            done += n;
        }
        return pages;
    }

    /**
     * The partition threshold is drawn per try (16 slots to 2^17, or the production one), so small tables
     * exercise partitioned builds of 1 to 64 ranges and both sides of each threshold; so is the helper that
     * takes half of each pass (none, one that runs it at once, the common pool, one that refuses).
     */
    record BulkCase(int rows, int thresholdBits, int helperKind, long seed) {}

    @Test
    @DisplayName("SNAP-2 a bulk build of distinct page rows holds exactly the rows that row-by-row inserts hold (60 seeded tries)")
    void bulkBuildEqualsInserts() {
        SeededTries.run("bulkBuildEqualsInserts", 60, 20261129L,
                g -> new BulkCase(g.intIn(0, 40_000), g.intIn(4, 19), g.intIn(0, 3), g.anyLong()),
                c -> bulkBuildEqualsInserts(c.rows(), c.thresholdBits(), c.helperKind(), c.seed()));
    }

    private static void bulkBuildEqualsInserts(int rows, int thresholdBits, int helperKind, long seed) {
        List<PreparedFrame> pages = pages(rows, new Random(seed));
        ArrayDeque<PreparedFrame> queue = new ArrayDeque<>(pages);
        int threshold = thresholdBits == 19 ? ResidenceTable.PARTITIONED_BUILD_SLOTS_MIN : 1 << thresholdBits;
        ResidenceTable bulk = ResidenceTable.ofDistinctRows(rows, queue, threshold, helper(helperKind));
        assertThat(queue).as("every frame is consumed").isEmpty();
        assertHoldsExactly(bulk, pages, rows);
    }

    /** 0: the caller alone; 1: runs the offered half at once, before the caller's; 2: the common pool; 3: refuses. */
    static Executor helper(int kind) {
        return switch (kind) {
            case 0 -> null;
            case 1 -> Runnable::run;
            case 2 -> ForkJoinPool.commonPool();
            default -> task -> {
                throw new RejectedExecutionException("refused on purpose");
            };
        };
    }

    /**
     * Rows whose home slots crowd the 8 slots below the middle of the table and the last 8 slots: their probes
     * must leave their half of a two-way build (past the middle; around the end), so those rows are inserted
     * after both halves. Built with every helper kind; each table holds exactly the rows.
     */
    @Test
    @DisplayName("SNAP-2 a two-way bulk build inserts the rows that overflow the middle or wrap the end after both halves")
    void bulkBuildDefersRowsLeavingTheirHalf() {
        int rows = 3_000; // 4,096 slots: 64 ranges of 64, the upper half starts at slot 2,048
        NamespaceTable namespaces = new NamespaceTable();
        Namespace ns = Namespace.utf8("ns-bulk");
        RecordBatch.Builder one = RecordBatch.builder(1);
        one.add(one.namespace(ns), new byte[] {1}, 0, 1, Medium.DRAM, false, 1, 0);
        int tag = PreparedFrame.page(one.build(), Scope.all(), namespaces).tag(0);
        List<byte[]> keys = new ArrayList<>();
        int belowMiddle = 0;
        int atEnd = 0;
        for (long k = 1; keys.size() < rows; k++) {
            byte[] key = ByteBuffer.allocate(8).putLong(k).array();
            int home = ResidenceTable.hash(tag, key) & 4095;
            boolean nearMiddle = home >= 2040 && home < 2048;
            boolean nearEnd = home >= 4088;
            if (nearMiddle && belowMiddle < 40) {
                belowMiddle++;
                keys.add(key);
            } else if (nearEnd && atEnd < 40) {
                atEnd++;
                keys.add(key);
            } else if (!nearMiddle && !nearEnd && keys.size() - belowMiddle - atEnd < rows - 80) {
                keys.add(key);
            }
        }
        List<PreparedFrame> pages = new ArrayList<>();
        for (int done = 0; done < rows; done += 1_000) {
            RecordBatch.Builder b = RecordBatch.builder(1_000);
            int j = b.namespace(ns);
            for (int i = done; i < done + 1_000; i++) {
                b.add(j, keys.get(i), 0, 8, Medium.DRAM, false, 1 + i, i);
            }
            pages.add(PreparedFrame.page(b.build(), Scope.all(), namespaces));
        }
        for (int kind = 0; kind < 4; kind++) {
            ResidenceTable bulk = ResidenceTable.ofDistinctRows(rows, new ArrayDeque<>(pages), 16, helper(kind));
            assertThat(bulk.capacity()).isEqualTo(4096);
            assertHoldsExactly(bulk, pages, rows);
        }
    }

    private static void assertHoldsExactly(ResidenceTable bulk, List<PreparedFrame> pages, int rows) {
        ResidenceTable model = new ResidenceTable(rows);
        for (PreparedFrame f : pages) {
            for (int i = 0; i < f.rows(); i++) {
                model.insert(f.tag(i), f.key(i), f.hash(i), f.sequence(i), f.size(i));
            }
        }
        assertThat(bulk.size()).isEqualTo(rows);
        assertThat(bulk.capacity()).isEqualTo(model.capacity());
        for (PreparedFrame f : pages) {
            for (int i = 0; i < f.rows(); i++) {
                int slot = bulk.find(f.tag(i), f.key(i), f.hash(i));
                assertThat(slot).as("row %d of a page", i).isNotNegative();
                assertThat(bulk.sequenceAt(slot)).isEqualTo(f.sequence(i));
                assertThat(bulk.sizeAt(slot)).isEqualTo(f.size(i));
                assertThat(bulk.tagAt(slot)).isEqualTo(f.tag(i));
            }
        }
        byte[] absent = ByteBuffer.allocate(8).putLong(-1).array();
        assertThat(bulk.find(0, absent, ResidenceTable.hash(0, absent))).isNegative();
        // Every row stays findable through the backward-shift removal of all of them.
        for (PreparedFrame f : pages) {
            for (int i = 0; i < f.rows(); i++) {
                bulk.removeAt(bulk.find(f.tag(i), f.key(i), f.hash(i)));
            }
        }
        assertThat(bulk.size()).isZero();
    }

    @Test
    @DisplayName("a bulk build refuses a row count that differs from its frames' rows")
    void bulkBuildChecksRowCount() {
        List<PreparedFrame> pages = pages(5_000, new Random(7));
        assertThatThrownBy(() -> ResidenceTable.ofDistinctRows(4_999, new ArrayDeque<>(pages), 1 << 10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("announced");
        List<PreparedFrame> few = pages(10, new Random(8));
        assertThatThrownBy(() -> ResidenceTable.ofDistinctRows(11, new ArrayDeque<>(few)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("announced");
    }

    @Test
    @DisplayName("IDX-1 clearBatch frees at most the batch size per call and returns every charged byte")
    void clearBatchIsBounded() {
        ResidenceTable t = new ResidenceTable(1000);
        long charged = 0;
        for (int i = 0; i < 1000; i++) {
            byte[] k = key(i);
            t.insert(0, k, ResidenceTable.hash(0, k), i + 1, 1);
            charged += RowCost.bytes(k.length);
        }
        RetiredRows r = new RetiredRows(null, t, charged);
        long freedBytes = 0;
        int batches = 0;
        while (r.rowsRemaining() > 0) {
            long[] f = r.freeBatch(64);
            assertThat(f[0]).isBetween(0L, 64L);
            freedBytes += f[1];
            batches++;
        }
        assertThat(batches).isEqualTo((1000 + 63) / 64);
        assertThat(freedBytes).isEqualTo(charged);
    }

    @Test
    @DisplayName("SNAP-12 the documented bytes-per-row formula covers the table's real array footprint")
    void rowCostFormulaCoversFootprint() {
        for (int rows : new int[] {1, 12, 13, 100, 1_000, 100_000}) {
            ResidenceTable t = new ResidenceTable(0);
            long charged = 0;
            for (int i = 0; i < rows; i++) {
                byte[] k = new byte[32];
                ByteBuffer.wrap(k).putInt(i);
                if (t.needsGrowth(1)) {
                    t = t.grownCopy(1);
                }
                t.insert(1, k, ResidenceTable.hash(1, k), i + 1, 4096);
                charged += RowCost.bytes(k.length);
            }
            // Real footprint: 4 parallel arrays (16-byte headers) of 28 bytes per slot, plus one byte[] per key.
            long footprint = 4 * 16 + 28L * t.capacity() + rows * ((16 + 32 + 7) & ~7L);
            assertThat(footprint).as("rows=%d capacity=%d", rows, t.capacity())
                    .isLessThanOrEqualTo(Math.max(charged, RowCost.bytes(32) * 1L) + 5 * 16 + 28L * ResidenceTable.MIN_CAPACITY);
        }
    }
}
