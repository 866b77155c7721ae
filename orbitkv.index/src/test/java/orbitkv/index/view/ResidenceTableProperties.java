package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The open-addressing row table against a HashMap model: insert, overwrite, backward-shift removal. */
class ResidenceTableProperties {
    record Op(int key, int tag, boolean remove, long seq) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return net.jqwik.api.Combinators.combine(Arbitraries.integers().between(0, 200), Arbitraries.integers().between(0, 3),
                Arbitraries.of(true, false), Arbitraries.longs().between(1, 1_000)).as(Op::new).list().ofMaxSize(400);
    }

    static byte[] key(int k) {
        return ByteBuffer.allocate(4).putInt(k).array();
    }

    @Property(tries = 2000, seed = "4242")
    void tableMatchesModel(@ForAll("ops") List<Op> ops) {
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
