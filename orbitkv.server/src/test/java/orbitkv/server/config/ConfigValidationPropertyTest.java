package orbitkv.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 3, as a seeded property: {@link ManagerConfig#from} is the one validation pass. For random
 * values of the settings that feed the inventory, session, index and membership configurations (drawn around
 * their bounds and relations), either it refuses with a {@link ConfigException} whose message names options as
 * an operator types them (never a consumer's field name such as {@code sessionsPerRequesterMax}), or every
 * consumer accepts the result (its constructors ran in the record's constructor; a miss would be an
 * IllegalStateException). Replay a run with {@code -Dorbitkv.config.seed=N}.
 */
@Tag("unit")
class ConfigValidationPropertyTest {
    private static final long SEED = Long.getLong("orbitkv.config.seed", System.nanoTime());
    private static final int CASES = 2_000;
    private static final Pattern FIELD_NAME = Pattern.compile("\\b[a-z]+(?:[A-Z][a-z]+)+\\b");
    private static final List<String> SIZES = List.of("1", "256", "415", "512", "1024", "4096", "64KiB", "512KiB", "1MiB",
            "4MiB", "8MiB", "64MiB");
    private static final List<String> MS = List.of("0", "1", "10", "50", "500", "999", "1000", "1500", "2000", "3000",
            "4000", "4500", "5000", "15000");
    private static final List<Setting> SIZE_SETTINGS = List.of(Setting.FRAME_ENCODED_BYTES_MAX,
            Setting.FRAME_DECODED_BYTES_MAX, Setting.SNAPSHOT_PAGE_BYTES_MAX, Setting.RECEIVE_WINDOW_BYTES,
            Setting.FRAME_INPUT_BYTES_MAX, Setting.JOURNAL_RETENTION_BYTES_MAX, Setting.INDEX_BUDGET_BYTES);
    private static final List<Setting> MS_SETTINGS = List.of(Setting.ACK_PENDING_PROGRESS_MS, Setting.IDLE_LIVENESS_MS,
            Setting.FRESHNESS_BUDGET_MS, Setting.COALESCING_WINDOW_MS, Setting.COALESCING_WAIT_MAX_MS,
            Setting.LEASE_TTL_MS, Setting.FENCE_SAFETY_MARGIN_MS, Setting.RENEWAL_INTERVAL_MS, Setting.ETCD_CALL_TIMEOUT_MS);

    @Test
    @DisplayName("BND-6 issue 18.3: whatever the one validation pass accepts, every consumer accepts; refusals name options as typed")
    void validationIsCompleteAndSpeaksInOptions() {
        System.out.println("ConfigValidationPropertyTest seed " + SEED + " (replay: -Dorbitkv.config.seed=" + SEED + ")");
        Random random = new Random(SEED);
        int accepted = 0;
        for (int i = 0; i < CASES; i++) {
            RawValues values = new RawValues().put(Setting.CLUSTER, "c1").put(Setting.NODE_ID, "n1")
                    .put(Setting.ETCD, "http://127.0.0.1:2379");
            StringBuilder flags = new StringBuilder();
            for (Setting s : SIZE_SETTINGS) {
                if (random.nextInt(3) > 0) {
                    String v = SIZES.get(random.nextInt(SIZES.size()));
                    values.put(s, v);
                    flags.append(' ').append(s.flag()).append(' ').append(v);
                }
            }
            for (Setting s : MS_SETTINGS) {
                if (random.nextInt(3) > 0) {
                    String v = MS.get(random.nextInt(MS.size()));
                    values.put(s, v);
                    flags.append(' ').append(s.flag()).append(' ').append(v);
                }
            }
            if (random.nextBoolean()) {
                String v = Integer.toString(random.nextInt(3));
                values.put(Setting.PEER_SESSIONS_MAX, v);
                flags.append(" --peer-sessions-max ").append(v);
            }
            try {
                ManagerConfig c = ManagerConfig.from(values);
                accepted++;
                c.sessionConfig().requireCompatible(c.inventoryConfig());
                assertThat(c.peerInboundMessageBytesMax()).as("seed %d case %d:%s", SEED, i, flags)
                        .isGreaterThanOrEqualTo((int) c.inventory().frameEncodedBytesMax());
            } catch (ConfigException e) {
                assertThat(e.getMessage()).as("seed %d case %d:%s", SEED, i, flags).contains("--");
                assertThat(FIELD_NAME.matcher(e.getMessage()).find())
                        .as("seed %d case %d:%s refused in field names: %s", SEED, i, flags, e.getMessage()).isFalse();
            }
        }
        assertThat(accepted).as("seed %d: the draws must also produce valid configurations", SEED).isPositive();
    }
}
