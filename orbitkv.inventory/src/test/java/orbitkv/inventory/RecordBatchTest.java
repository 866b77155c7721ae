package orbitkv.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import orbitkv.testing.SeededTries;

/** The columnar record batch: record invariants at construction, exact round trip, resident-map order. */
@Tag("unit")
class RecordBatchTest {
    static final Namespace A = Namespace.utf8("a");
    static final Namespace B = Namespace.utf8("b");

    @Test
    @DisplayName("PUB-9 a batch holds exactly the records it was built from; namespaces are tabled once")
    void roundTrip() {
        List<ResidenceRecord> records = List.of(ResidenceRecord.put(new StateKey(A, new byte[] {1}), Medium.DRAM, 3, 100),
                ResidenceRecord.delete(new StateKey(B, new byte[] {1, 2}), Medium.SSD, 4),
                ResidenceRecord.put(new StateKey(A, new byte[64]), Medium.SSD, Long.MAX_VALUE, Long.MAX_VALUE));
        RecordBatch batch = RecordBatch.of(records);
        assertThat(batch.asList()).isEqualTo(records);
        assertThat(batch.namespaceCount()).isEqualTo(2);
        assertThat(batch.keyLength(2)).isEqualTo(64);
        assertThat(batch.isDelete(1)).isTrue();
        assertThat(batch).isEqualTo(RecordBatch.of(new ArrayList<>(records))).hasSameHashCodeAs(RecordBatch.of(records));
        assertThat(RecordBatch.empty().isEmpty()).isTrue();
        assertThatThrownBy(() -> batch.sequence(3)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    @DisplayName("PUB-9 SES-9 a record breaking an invariant cannot enter a batch, and the refusal names it")
    void invariants() {
        RecordBatch.Builder b = RecordBatch.builder(4);
        int ns = b.namespace(A);
        byte[] key = new byte[65];
        assertThatThrownBy(() -> b.add(ns, key, 0, 0, Medium.DRAM, false, 1, 0)).hasMessageContaining("record 0: key must be 1..64");
        assertThatThrownBy(() -> b.add(ns, key, 0, 65, Medium.DRAM, false, 1, 0)).hasMessageContaining("got 65");
        assertThatThrownBy(() -> b.add(ns, key, 0, 1, Medium.DRAM, false, 0, 0)).hasMessageContaining("sequence must be >= 1");
        assertThatThrownBy(() -> b.add(ns, key, 0, 1, Medium.DRAM, false, 1, -1)).hasMessageContaining("size must be >= 0");
        assertThatThrownBy(() -> b.add(ns, key, 0, 1, Medium.DRAM, true, 1, 5)).hasMessageContaining("a delete carries size 0");
        assertThatThrownBy(() -> b.add(1, key, 0, 1, Medium.DRAM, false, 1, 0)).hasMessageContaining("namespace index 1");
        assertThat(b.size()).isZero();
        b.add(ns, key, 3, 2, Medium.SSD, false, 1, 0);
        RecordBatch built = b.build();
        assertThat(built.size()).isEqualTo(1);
        assertThatThrownBy(() -> b.add(ns, key, 0, 1, Medium.DRAM, false, 1, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("SNAP-2 batch order equals ResidenceOrder on the materialized records (500 seeded tries)")
    void compareIsResidenceOrder() {
        SeededTries.run("compareIsResidenceOrder", 500, SeededTries.freshBaseSeed(), SeededTries.Gen::seed,
                RecordBatchTest::compareIsResidenceOrder);
    }

    private static void compareIsResidenceOrder(long seed) {
        Random rnd = new Random(seed);
        List<ResidenceRecord> records = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            byte[] k = new byte[1 + rnd.nextInt(3)];
            for (int j = 0; j < k.length; j++) {
                k[j] = (byte) (rnd.nextInt(3) - 1); // 0xff sorts after 0x01: unsigned order
            }
            records.add(ResidenceRecord.put(new StateKey(rnd.nextBoolean() ? A : B, k), rnd.nextBoolean() ? Medium.DRAM : Medium.SSD,
                    1 + rnd.nextInt(9), rnd.nextInt(9)));
        }
        RecordBatch batch = RecordBatch.of(records);
        for (int i = 0; i < records.size(); i++) {
            for (int j = 0; j < records.size(); j++) {
                assertThat(Integer.signum(batch.compare(i, j))).as("seed %d: %d vs %d", seed, i, j)
                        .isEqualTo(Integer.signum(ResidenceOrder.compare(records.get(i), records.get(j))));
            }
        }
    }

    @Test
    @DisplayName("SNAP-2 firstDisorder is the first record not strictly after its predecessor, the same on every call (500 seeded tries)")
    void firstDisorderIsTheFirstBreakOfStrictOrder() {
        SeededTries.run("firstDisorderIsTheFirstBreakOfStrictOrder", 500, SeededTries.freshBaseSeed(), SeededTries.Gen::seed,
                RecordBatchTest::firstDisorder);
    }

    private static void firstDisorder(long seed) {
        Random rnd = new Random(seed);
        List<ResidenceRecord> records = new ArrayList<>();
        for (int i = 0; i < rnd.nextInt(6); i++) {
            byte[] k = {(byte) rnd.nextInt(3)};
            records.add(ResidenceRecord.put(new StateKey(rnd.nextBoolean() ? A : B, k), rnd.nextBoolean() ? Medium.DRAM : Medium.SSD, 1, 0));
        }
        if (rnd.nextBoolean()) {
            records.sort(ResidenceOrder::compare);
        }
        int expected = -1;
        for (int i = 1; i < records.size() && expected < 0; i++) {
            if (ResidenceOrder.compare(records.get(i - 1), records.get(i)) >= 0) {
                expected = i;
            }
        }
        RecordBatch batch = RecordBatch.of(records);
        assertThat(batch.firstDisorder()).as("seed %d: %s", seed, records).isEqualTo(expected);
        assertThat(batch.firstDisorder()).as("seed %d: remembered", seed).isEqualTo(expected);
    }
}
