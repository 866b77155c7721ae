package orbitkv.inventory.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.SessionConfig;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class SessionConfigTest {
    @Test
    @DisplayName("BND-6 defaults are DESIGN §9's; a broken relation names both sides")
    void validation() {
        SessionConfig d = SessionConfig.defaults();
        assertThat(d.receiveWindowBytes()).isEqualTo(8L << 20);
        assertThat(d.ackIntervalMs()).isEqualTo(10);
        assertThat(d.livenessIntervalMs()).isEqualTo(1000);
        assertThat(d.sessionsPerRequesterMax()).isEqualTo(128);
        assertThat(d.openEncodedBytesMax()).isEqualTo(64 << 10);
        assertThatThrownBy(() -> d.withReceiveWindowBytes(1000))
                .hasMessageContaining("receiveWindowBytes (1000)").hasMessageContaining("frameEncodedBytesMax (1048576)");
        assertThatThrownBy(() -> d.withFrameBytesMax(4096, 1024))
                .hasMessageContaining("frameDecodedBytesMax (1024)").hasMessageContaining("frameEncodedBytesMax (4096)");
        assertThatThrownBy(() -> d.withBackoffMs(10, 5, 1, 1)).hasMessageContaining("reconnectBackoffMaxMs (5)");
        assertThatThrownBy(() -> d.withFrameBytesMax(2048, 8192).withReceiveWindowBytes(4096)
                .requireCompatible(InventoryConfig.defaults()))
                .hasMessageContaining("InventoryConfig.frameEncodedBytesMax").hasMessageContaining("SessionConfig.frameEncodedBytesMax");
    }
}
