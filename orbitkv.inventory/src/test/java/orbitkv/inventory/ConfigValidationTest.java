package orbitkv.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ConfigValidationTest {
    @Test
    @DisplayName("BND-6 defaults are the design's table (DESIGN §9)")
    void defaults() {
        InventoryConfig c = InventoryConfig.defaults();
        assertThat(c.journalBytesMax()).isEqualTo(64L << 20);
        assertThat(c.journalRecordsMax()).isEqualTo(1_000_000);
        assertThat(c.inputRecordsMax()).isEqualTo(1024);
        assertThat(c.inputBytesMax()).isEqualTo(512 * 1024);
        assertThat(c.frameEncodedBytesMax()).isEqualTo(1 << 20);
        assertThat(c.frameDecodedBytesMax()).isEqualTo(4 << 20);
        assertThat(c.pageRecordsMax()).isEqualTo(1024);
        assertThat(c.pageBytesMax()).isEqualTo(512 * 1024);
        assertThat(c.coalescingWindowMs()).isEqualTo(2);
        assertThat(c.maxIntentionalWaitMs()).isEqualTo(5);
    }

    @Test
    @DisplayName("BND-6 a broken relation names both settings and their values")
    void relations() {
        InventoryConfig c = InventoryConfig.defaults();
        assertThatThrownBy(() -> c.withWindow(6, 5)).hasMessage("coalescingWindowMs (6) must be <= maxIntentionalWaitMs (5)");
        assertThatThrownBy(() -> c.withFrameDecodedBytesMax(1000)).hasMessage("frameDecodedBytesMax (1000) must be >= frameEncodedBytesMax (1048576)");
        assertThatThrownBy(() -> c.withPageBytesMax(1 << 20)).hasMessageContaining("pageBytesMax (1048576) must be <= frameEncodedBytesMax - PAGE_FRAME_OVERHEAD_BYTES");
        assertThatThrownBy(() -> c.withJournalBytesMax(100)).hasMessageContaining("journalBytesMax (100) must be >= JOURNAL_ENTRY_BYTES_MAX");
        assertThatThrownBy(() -> c.withInputRecordsMax(0)).hasMessage("inputRecordsMax (0) must be >= 1 (1)");
        assertThat(c.withWindow(0, 0).maxIntentionalWaitMs()).isZero();
    }

    @Test
    @DisplayName("INV-3 bad mutation input is refused with the field named and changes no state")
    void badInput() {
        InventorySource s = InventorySource.create(InventoryConfig.defaults());
        StateKey k = new StateKey(Namespace.utf8("a"), new byte[] {1});
        assertThatThrownBy(() -> s.put(k, Medium.DRAM, -1)).hasMessage("put sizeBytes must be >= 0, got -1");
        assertThat(s.headSequence()).isZero();
        assertThatThrownBy(() -> s.read(-1, Scope.all(), 1)).hasMessageContaining("fromExclusive must be >= 0");
        assertThatThrownBy(() -> s.read(0, Scope.all(), 0)).hasMessageContaining("intervalsMax must be >= 1");
    }
}
