package orbitkv.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The start-up check that the configured bounds fit the JVM's heap and direct-memory limits (issue 20 item 4,
 * BND-6). The real-process half (a Manager with a small -Xmx refuses; streamed saves larger than its heap
 * succeed) is {@code orbitkv.conformance.manager.SaveMemoryBoundTest}.
 */
@Tag("unit")
class MemoryBudgetTest {
    private static final long MIB = 1024 * 1024;

    private static ManagerConfig distributed(String... extra) {
        RawValues v = new RawValues().put(Setting.CLUSTER, "c").put(Setting.NODE_ID, "n")
                .put(Setting.ETCD, "http://127.0.0.1:2379");
        for (int i = 0; i < extra.length; i += 2) {
            v.put(Setting.valueOf(extra[i]), extra[i + 1]);
        }
        return ManagerConfig.from(v);
    }

    @Test
    @DisplayName("BND-6 the default bounds fit the image's baked limits (-Xmx1g, 1 GiB direct), not a 256 MiB heap")
    void defaults() {
        ManagerConfig c = distributed();
        assertThat(MemoryBudget.refusal(c, 1024 * MIB, 1024 * MIB)).isEmpty();
        Optional<String> small = MemoryBudget.refusal(c, 256 * MIB, 1024 * MIB);
        assertThat(small).hasValueSatisfying(m -> assertThat(m)
                .contains("the heap limit is 256.0 MiB but the configured bounds need 400.0 MiB")
                .contains("--journal-retention-bytes-max 64.0 MiB").contains("--index-budget-bytes 256.0 MiB")
                .contains("--json-body-bytes-max x --http-requests-in-flight-max 16.0 MiB")
                .contains("JDK_JAVA_OPTIONS='-Xmx400m -XX:MaxDirectMemorySize=320m'")
                .doesNotContain("direct-memory limit is"));
    }

    @Test
    @DisplayName("BND-6 restore responses are charged to direct memory; a standalone Manager has no index budget to hold")
    void directAndStandalone() {
        ManagerConfig c = distributed("RESTORE_BYTES_IN_FLIGHT_MAX", "1GiB");
        assertThat(MemoryBudget.refusal(c, 4096 * MIB, 1024 * MIB)).hasValueSatisfying(m -> assertThat(m)
                .contains("the direct-memory limit is 1024.0 MiB but the configured bounds need 1088.0 MiB")
                .contains("--restore-bytes-in-flight-max 1024.0 MiB"));
        ManagerConfig standalone = ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")
                .put(Setting.RESTORE_BYTES_IN_FLIGHT_MAX, "64MiB").put(Setting.BLOCK_BYTES_MAX, "16MiB"));
        assertThat(MemoryBudget.refusal(standalone, 160 * MIB, 128 * MIB)).isEmpty();
        assertThat(MemoryBudget.refusal(standalone, 143 * MIB, 128 * MIB)).isPresent();
    }
}
