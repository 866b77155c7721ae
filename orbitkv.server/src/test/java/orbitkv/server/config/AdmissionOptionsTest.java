package orbitkv.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import orbitkv.recovery.AdmissionPolicy;
import orbitkv.recovery.NicLane;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The {@code --admission-*} options (issue 39; ROUTE-11, BND-6): parsing, defaults and the relations named. */
@Tag("unit")
class AdmissionOptionsTest {
    private static RawValues standalone() {
        return new RawValues().put(Setting.STANDALONE, "true");
    }

    @Test
    @DisplayName("ROUTE-11 defaults: lo, 1 GiB per lane, unpaced, 10 % reserve, rx and tx lanes")
    void defaults() {
        AdmissionOptions a = ManagerConfig.from(standalone()).admission();
        assertThat(a.enabled()).isTrue();
        assertThat(a.nicPaces()).containsExactly(java.util.Map.entry("lo", 0L));
        AdmissionPolicy p = a.policy();
        assertThat(p.lanes()).containsOnlyKeys(new NicLane("lo", NicLane.Direction.RX),
                new NicLane("lo", NicLane.Direction.TX));
        assertThat(p.lanes().values().iterator().next().usableBytes()).isEqualTo((1L << 30) - ((1L << 30) + 9) / 10);
        assertThat(p.leaseBatchBytesMax()).isEqualTo(64L << 20);
    }

    @Test
    @DisplayName("ROUTE-11 NICs with their own rate; the default rate for the others")
    void nicsWithRates() {
        AdmissionOptions a = ManagerConfig.from(standalone().put(Setting.ADMISSION_NICS, "lo,veth-a:100MiB")
                .put(Setting.ADMISSION_PACE_BYTES_PER_SECOND, "1GiB")).admission();
        assertThat(a.nicPaces()).containsExactly(java.util.Map.entry("lo", 1L << 30),
                java.util.Map.entry("veth-a", 100L << 20));
        assertThat(a.policy().lanes()).hasSize(4);
    }

    @Test
    @DisplayName("BND-6 bad NIC lists and broken relations are refused naming both sides")
    void refusals() {
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.ADMISSION_NICS, "lo,lo")))
                .hasMessageContaining("names lo twice");
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.ADMISSION_NICS, "bad name")))
                .hasMessageContaining("--admission-nics");
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.ADMISSION_NICS, "lo:1:2")))
                .hasMessageContaining("NAME or NAME:RATE");
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.BLOCK_BYTES_MAX, "8MiB")
                .put(Setting.ADMISSION_WINDOW_BYTES_MAX, "8MiB").put(Setting.ADMISSION_LEASE_BATCH_BYTES_MAX, "1MiB")))
                .hasMessageContaining("--admission-window-bytes-max").hasMessageContaining("--block-bytes-max")
                .hasMessageContaining("--admission-reserve-percent");
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.BLOCK_BYTES_MAX, "1MiB")
                .put(Setting.ADMISSION_WINDOW_BYTES_MAX, "8MiB")))
                .hasMessageContaining("--admission-lease-batch-bytes-max").hasMessageContaining("--admission-reserve-percent");
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.ADMISSION_RESERVE_PERCENT, "91")))
                .hasMessageContaining("--admission-reserve-percent");
        // disabled: the relations do not apply
        assertThat(ManagerConfig.from(standalone().put(Setting.ADMISSION_DISABLED, "true")
                .put(Setting.ADMISSION_WINDOW_BYTES_MAX, "1")).admission().enabled()).isFalse();
    }
}
