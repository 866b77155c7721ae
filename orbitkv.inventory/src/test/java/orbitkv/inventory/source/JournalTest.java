package orbitkv.inventory.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class JournalTest {
    private static ResidenceRecord rec(long seq) {
        return ResidenceRecord.put(new StateKey(Namespace.utf8("a"), new byte[] {(byte) seq}), Medium.DRAM, seq, 1);
    }

    @Test
    @DisplayName("BND-5 the ring grows, wraps and trims while copies stay contiguous")
    void wrapAndCopy() {
        Journal j = new Journal(1500, 1L << 30);
        for (long s = 1; s <= 4000; s++) {
            j.append(rec(s));
        }
        assertThat(j.oldestRetained()).isEqualTo(2501);
        assertThat(j.size()).isEqualTo(1500);
        ResidenceRecord[] copy = j.copyAfter(2600, 4000, 1024);
        assertThat(copy).hasSize(1024);
        assertThat(Arrays.stream(copy).mapToLong(ResidenceRecord::sequence)).containsExactlyElementsOf(
                java.util.stream.LongStream.rangeClosed(2601, 3624).boxed().toList());
        assertThat(j.copyAfter(3990, 3995, 1024)).hasSize(5);
    }

    @Test
    @DisplayName("BND-5 the byte accounting follows the documented formula and the peak is kept")
    void byteAccounting() {
        Journal j = new Journal(10, InventoryConfig.JOURNAL_ENTRY_BYTES_MAX);
        j.append(rec(1));
        assertThat(j.bytes()).isEqualTo(InventoryConfig.JOURNAL_ENTRY_FIXED_BYTES + 1 + 1);
        j.append(ResidenceRecord.put(new StateKey(new Namespace(new byte[255]), new byte[64]), Medium.SSD, 2, 1));
        assertThat(j.bytes()).as("the largest entry alone fills the bound: the first one was trimmed").isEqualTo(InventoryConfig.JOURNAL_ENTRY_BYTES_MAX);
        assertThat(j.oldestRetained()).isEqualTo(2);
        assertThat(j.peakBytes()).isEqualTo(InventoryConfig.JOURNAL_ENTRY_BYTES_MAX);
        assertThat(j.trimmed()).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-3 an append must carry the next contiguous sequence; a trimmed copy is refused")
    void misuseThrows() {
        Journal j = new Journal(2, 1L << 20);
        j.append(rec(1));
        assertThatThrownBy(() -> j.append(rec(3))).hasMessageContaining("must carry sequence 2");
        j.append(rec(2));
        j.append(rec(3));
        assertThatThrownBy(() -> j.copyAfter(0, 3, 10)).hasMessageContaining("not inside the retained (1, 3]");
    }
}
