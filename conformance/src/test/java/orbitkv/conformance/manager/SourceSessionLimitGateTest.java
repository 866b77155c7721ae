package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 33 finding "--source-sessions-max below the number of peers leaves a peer PartialHints forever with no log
 * line", end to end: three Manager processes each serving at most one InventorySession refuse one of their two
 * peers. Each source must say so: /health degraded naming the refused member, status listing it with an episode
 * count, and one WARN line for the episode however often the refused requester retries (BND-3).
 */
@Tag("gate")
class SourceSessionLimitGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final String SOURCE_LINE = "refusing the InventorySession of current member";
    private static final String REQUESTER_LINE = "refuses this requester's session with SESSION_LIMIT";
    /** Retries of the refused requester the log-once check waits for. */
    private static final int RETRIES_MIN = 3;

    @Test
    @DisplayName("BND-3 issue 33 --source-sessions-max below the number of peers: each source logs the refused member once and shows it in /health and status")
    void sourceSessionsMaxBelowPeersIsLoggedOnceAndShownInHealth(@TempDir Path work) throws Exception {
        String cluster = "limit-" + UUID.randomUUID().toString().substring(0, 8);
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        Map<String, ManagerProcess> byIncarnation = new LinkedHashMap<>();
        List<ManagerProcess> all = new ArrayList<>();
        try {
            for (String node : List.of("a", "b", "c")) {
                List<String> args = ManagerProcess.distributedArgs(cluster, node, ETCD.endpoints().toString(),
                        Files.createDirectories(work.resolve("dram-" + node)), "--dram", "8MiB", "--block-bytes-max", "1MiB",
                        "--source-sessions-max", "1");
                args.addAll(ManagerProcess.LOAD_TOLERANT_LEASE);
                all.add(ManagerProcess.launch(node, work.resolve("logs"), args));
            }
            for (ManagerProcess m : all) {
                m.awaitReady();
                byIncarnation.put(m.incarnation(), m);
            }
            for (ManagerProcess source : all) {
                ManagerApi api = new ManagerApi(source.httpBase());
                Await.until(source.name() + " reports a refused member in /health", BOUND, () -> {
                    JsonNode h = api.health();
                    return "degraded".equals(h.path("status").asText()) && h.path("source_sessions_refused_members").size() == 1;
                });
                String refused = api.health().path("source_sessions_refused_members").get(0).asText();
                ManagerProcess requester = byIncarnation.get(refused);
                assertThat(requester).as("the refused member %s is one of the Managers", refused).isNotNull();
                assertThat(refused).isNotEqualTo(source.incarnation());
                ManagerApi requesterApi = new ManagerApi(requester.httpBase());
                Await.until(requester.name() + " retried " + source.name() + " at least " + RETRIES_MIN + " times", BOUND,
                        () -> connectsTo(requesterApi.status(), source.incarnation()) >= RETRIES_MIN);

                JsonNode sessions = api.status().path("sessions");
                assertThat(sessions.path("source_sessions_refused_members").toString()).contains(refused);
                long episodes = sessions.path("source_session_limit_episodes").asLong();
                long sourceLines = count(source.stderrText(), SOURCE_LINE + " " + refused);
                long connects = connectsTo(requesterApi.status(), source.incarnation());
                assertThat(sourceLines).as("%s: one WARN line per episode (%d episodes), not one per retry (%d connects)",
                        source.name(), episodes, connects).isBetween(1L, episodes).isLessThan(connects);
                assertThat(count(requester.stderrText(), "source " + source.incarnation() + " " + REQUESTER_LINE)).as("%s logs the refusal once per episode", requester.name())
                        .isBetween(1L, connects - 1);
            }
        } finally {
            all.forEach(ManagerProcess::close);
        }
    }

    private static long connectsTo(JsonNode status, String source) {
        for (JsonNode s : status.path("sessions").path("requester")) {
            if (source.equals(s.path("source").path("incarnation").asText())) {
                return s.path("connects").asLong();
            }
        }
        return 0;
    }

    private static long count(String text, String needle) {
        return text.lines().filter(l -> l.contains(needle)).count();
    }
}
