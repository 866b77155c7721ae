package orbitkv.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class MembershipConfigTest {
    @Test
    @DisplayName("MEM-8 defaults: fence 12 s after a confirmed renewal, renewal and call deadlines fit inside")
    void defaults() {
        MembershipConfig c = MembershipConfig.defaults();
        assertThat(c.fenceAfterRenewalMs()).isEqualTo(12_000);
        assertThat(c.renewalIntervalMs() + c.etcdCallTimeoutMs() + 7_000).isLessThan(c.fenceAfterRenewalMs());
    }

    @Test
    @DisplayName("MEM-8 broken relations are refused naming both sides")
    void relations() {
        assertThatThrownBy(() -> new MembershipConfig(15_000, 15_000, 2_000, 2_000, 100, 1_000, 512))
                .hasMessage("fenceSafetyMarginMs (15000) must be >= 0 and < leaseTtlMs (15000)");
        assertThatThrownBy(() -> new MembershipConfig(15_000, 3_000, 12_000, 2_000, 100, 1_000, 512))
                .hasMessage("renewalIntervalMs (12000) must be >= 1 and < leaseTtlMs - fenceSafetyMarginMs (12000)");
        assertThatThrownBy(() -> new MembershipConfig(15_000, 3_000, 2_000, 12_000, 100, 1_000, 512))
                .hasMessage("etcdCallTimeoutMs (12000) must be >= 1 and < leaseTtlMs - fenceSafetyMarginMs (12000)");
        assertThatThrownBy(() -> new MembershipConfig(15_500, 3_000, 2_000, 2_000, 100, 1_000, 512))
                .hasMessageContaining("leaseTtlMs must be a whole number of seconds");
        assertThatThrownBy(() -> new MembershipConfig(15_000, 3_000, 2_000, 2_000, 500, 100, 512))
                .hasMessage("retryBackoffMinMs (500) must be >= 1 and <= retryBackoffMaxMs (100)");
        assertThatThrownBy(() -> new MembershipConfig(15_000, 3_000, 2_000, 2_000, 100, 1_000, 0))
                .hasMessage("memberPageSize must be 1..10000, got 0");
    }

    @Test
    @DisplayName("--etcd URLs: http://host:port only, named on refusal")
    void endpoints() {
        assertThat(EtcdEndpoints.parse("http://127.0.0.1:2379, http://h2:2380").urls()).hasSize(2);
        assertThatThrownBy(() -> EtcdEndpoints.parse("127.0.0.1:2379")).hasMessageContaining("http://host:port");
        assertThatThrownBy(() -> EtcdEndpoints.parse("https://h:1")).hasMessageContaining("'https://h:1'");
        assertThatThrownBy(() -> EtcdEndpoints.parse("http://h:1/v3")).hasMessageContaining("http://host:port");
        assertThatThrownBy(() -> EtcdEndpoints.parse("")).hasMessageContaining("http://host:port");
    }
}
