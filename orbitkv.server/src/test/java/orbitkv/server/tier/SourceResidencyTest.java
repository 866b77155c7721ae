package orbitkv.server.tier;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class SourceResidencyTest {
    @Test
    @DisplayName("INV-3 PUB-8 tier saves and evictions are InventorySource records; their sequence is the answer's sequence")
    void tiersReportToTheSource(@TempDir Path dir) throws Exception {
        InventorySource source = InventorySource.create(InventoryConfig.defaults());
        SourceResidency residency = new SourceResidency(source);
        StateKey k = new StateKey(Namespace.utf8("ns"), new byte[] {1});
        try (DramTier dram = DramTier.open(dir, 1 << 16, 8, residency)) {
            SaveOutcome.Stored first = (SaveOutcome.Stored) dram.put(k, new byte[100]);
            SaveOutcome.Stored again = (SaveOutcome.Stored) dram.put(k, new byte[100]);
            assertThat(first.sequence()).isEqualTo(1);
            assertThat(again.sequence()).isEqualTo(2); // a re-save is a new generation (INV-3)
            assertThat(dram.evict(k)).isTrue();
            assertThat(source.headSequence()).isEqualTo(3);
            assertThat(residency.headSequence()).isEqualTo(3);
            // A delete of what the source does not hold consumes no sequence (SSD never saved it: PUB-8).
            assertThat(residency.onEvicted(k, Medium.SSD)).isEqualTo(ResidencyListener.NO_SEQUENCE);
            assertThat(source.headSequence()).isEqualTo(3);
            assertThat(source.status().retainedRecords()).isEqualTo(3);
        }
    }
}
