package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.docs.MarkdownTable;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The repository's proof that the spec is sufficient (issue 26 item 7): {@code conformance/src/test/python/requester.py},
 * a requester written in Python from docs/*.md and the .proto files alone (it imports no Java code; its message classes
 * are generated here from the .proto with protoc), registers as a requester-only member of a real cluster (real etcd,
 * two Manager processes), bootstraps and follows every Manager's inventory over InventorySession v4, and its index must
 * equal every Manager's own {@code GET /cache/metadata/residences} listing EXACTLY (namespace, key, medium, sequence,
 * size, and the watermark equal to the listing's head sequence) at three comparison points: after bootstrap, after more
 * saves (new keys and overwrites), and after DRAM evictions and whole-key evictions. While it is a member, every
 * Manager's coverage stays exact (MEM-11). Needs /usr/bin/python3 with grpcio and protobuf, and protoc
 * (scripts/lib/python-grpc.sh installs them).
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ExternalRequesterGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(45);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A small page, so every listing of the comparison crosses several cursors. */
    private static final int PAGE = 7;

    private final String cluster = "pyreq-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    private Path work;
    private final List<ManagerProcess> managers = new ArrayList<>();
    private Process python;
    private Writer pythonIn;
    private final BlockingQueue<String> pythonOut = new LinkedBlockingQueue<>(10_000);
    private final StringBuilder pythonErr = new StringBuilder();

    @BeforeAll
    void startCluster() throws Exception {
        work = Files.createTempDirectory("orbitkv-external-requester-");
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        for (String node : List.of("m1", "m2")) {
            Path dir = work.resolve(node);
            List<String> args = ManagerProcess.distributedArgs(cluster, node, ETCD.endpoints().toString(),
                    Files.createDirectories(dir.resolve("dram")), "--dram", "16MiB", "--block-bytes-max", "1MiB",
                    "--ssd-dir", Files.createDirectories(dir.resolve("ssd")).toString(), "--ssd", "16MiB",
                    "--shutdown-drain-ms", "2000", "--idle-liveness-ms", "500");
            args.addAll(ManagerProcess.LOAD_TOLERANT_LEASE);
            managers.add(ManagerProcess.launch(node, work.resolve("logs"), args));
        }
        managers.forEach(ManagerProcess::awaitReady);
        for (ManagerProcess m : managers) {
            Await.until(m + " admits two members", BOUND, () -> api(m).status().at("/membership/members").asInt() == 2);
        }
    }

    @AfterAll
    void stopAll() throws IOException, InterruptedException {
        if (python != null) {
            if (python.isAlive()) {
                try {
                    pythonIn.write("quit\n");
                    pythonIn.flush();
                } catch (IOException ignored) {
                    // already gone
                }
                if (!python.waitFor(10, TimeUnit.SECONDS)) {
                    python.destroyForcibly();
                }
            }
        }
        managers.forEach(ManagerProcess::close);
        ManagerProcess.deleteTree(work);
    }

    private static ManagerApi api(ManagerProcess m) {
        return new ManagerApi(m.httpBase());
    }

    /** Generates the message classes from the .proto (never from Java) and starts the Python requester. */
    private String startPython() throws Exception {
        Path root = MarkdownTable.root();
        Path gen = Files.createDirectories(work.resolve("pb"));
        Process protoc = new ProcessBuilder("protoc", "--python_out=" + gen,
                "-I", root.resolve("orbitkv.inventory/src/main/proto").toString(),
                "orbitkv/inventory/v4/inventory_session.proto").redirectErrorStream(true).start();
        String protocOut = new String(protoc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(protoc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(protoc.exitValue()).as("protoc (scripts/lib/python-grpc.sh installs it): %s", protocOut).isZero();
        python = new ProcessBuilder("/usr/bin/python3", root.resolve("conformance/src/test/python/requester.py").toString(),
                "--etcd", ETCD.endpoints().toString().split(",")[0], "--cluster", cluster, "--node-id", "py-indexer",
                "--pb-dir", gen.resolve("orbitkv/inventory/v4").toString()).start();
        pythonIn = new OutputStreamWriter(python.getOutputStream(), StandardCharsets.UTF_8);
        Thread.ofPlatform().daemon(true).name("python-out").start(() -> pump(new BufferedReader(
                new InputStreamReader(python.getInputStream(), StandardCharsets.UTF_8)), true));
        Thread.ofPlatform().daemon(true).name("python-err").start(() -> pump(new BufferedReader(
                new InputStreamReader(python.getErrorStream(), StandardCharsets.UTF_8)), false));
        String ready = pythonOut.poll(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertThat(ready).as("the requester's READY line; stderr: %s", pythonErr).isNotNull().startsWith("READY py-indexer/");
        return ready.substring("READY ".length());
    }

    private void pump(BufferedReader r, boolean out) {
        try (r) {
            String line;
            while ((line = r.readLine()) != null) {
                if (out) {
                    pythonOut.offer(line);
                } else {
                    synchronized (pythonErr) {
                        if (pythonErr.length() < 200_000) {
                            pythonErr.append(line).append('\n');
                        }
                    }
                }
            }
        } catch (IOException ignored) {
            // the process ended
        }
    }

    /** The Python requester's index: node id -> its source entry. */
    private JsonNode dump() {
        try {
            pythonIn.write("dump\n");
            pythonIn.flush();
            String line = pythonOut.poll(10, TimeUnit.SECONDS);
            assertThat(line).as("an INDEX line; stderr: %s", pythonErr).isNotNull().startsWith("INDEX ");
            return JSON.readTree(line.substring("INDEX ".length()));
        } catch (IOException | InterruptedException e) {
            throw new AssertionError("the Python requester did not answer; stderr: " + pythonErr, e);
        }
    }

    /** A Manager's own listing, every page followed; the head sequence of the last page. */
    private record Listing(List<String> rows, long head) {}

    private static Listing residences(ManagerProcess m) {
        List<String> rows = new ArrayList<>();
        String cursor = null;
        long head;
        int pages = 0;
        do {
            ManagerApi.Reply r = api(m).get("/cache/metadata/residences?limit=" + PAGE + (cursor == null ? "" : "&cursor=" + cursor));
            assertThat(r.status()).as(r.text()).isEqualTo(200);
            JsonNode page = r.json();
            page.get("residences").forEach(e -> rows.add(e.get("namespace").asText() + " " + e.get("key").asText() + " "
                    + e.get("medium").asText() + " " + e.get("sequence").asLong() + " " + e.get("size").asLong()));
            head = page.get("head_sequence").asLong();
            cursor = page.get("next_cursor").isNull() ? null : page.get("next_cursor").asText();
            assertThat(++pages).isLessThan(1000);
        } while (cursor != null);
        return new Listing(rows, head);
    }

    private static List<String> rowsOf(JsonNode source) {
        List<String> rows = new ArrayList<>();
        source.get("residences").forEach(e -> rows.add(e.get(0).asText() + " " + e.get(1).asText() + " " + e.get(2).asText()
                + " " + e.get(3).asLong() + " " + e.get(4).asLong()));
        return rows;
    }

    /**
     * One comparison point: waits (bounded) until the Python requester's watermark for every Manager equals that
     * Manager's head sequence, then requires its index to equal the Manager's listing exactly. Returns rows compared.
     */
    private int compare(String point) {
        int compared = 0;
        for (ManagerProcess m : managers) {
            String node = m.name();
            JsonNode self = api(m).status().at("/self");
            Listing[] listing = new Listing[1];
            JsonNode[] source = new JsonNode[1];
            Await.until(point + ": the Python requester's view of " + node + " reaches its head", BOUND, () -> {
                listing[0] = residences(m);
                source[0] = dump().get(node);
                return source[0] != null && source[0].get("watermark").asLong() == listing[0].head()
                        && residences(m).head() == listing[0].head();
            });
            assertThat(node + "/" + source[0].get("node_epoch").asLong() + "/" + source[0].get("incarnation").asText())
                    .as("the source incarnation the Python requester follows").isEqualTo(self.get("incarnation").asText());
            assertThat(rowsOf(source[0])).as("%s: Python index of %s vs its /cache/metadata/residences", point, node)
                    .isEqualTo(listing[0].rows());
            compared += listing[0].rows().size();
        }
        return compared;
    }

    private static String key(int i) {
        return String.format("%04x", i);
    }

    private void save(ManagerProcess m, String ns, int from, int to, int generation) {
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        for (int i = from; i < to; i++) {
            blocks.put(key(i), ManagerApi.payload(generation, i, 64 + i));
        }
        ManagerApi.Reply r = api(m).save(ns, blocks);
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        assertThat(api(m).sync().status()).isEqualTo(200);
    }

    private void evict(ManagerProcess m, String ns, List<String> keys, String medium) {
        ManagerApi.Reply r = api(m).evict(ns, keys, medium);
        assertThat(r.status()).as(r.text()).isEqualTo(200);
    }

    @Test
    @DisplayName("MEM-11 SNAP-7 DELTA-1 a Python requester written from the docs alone equals every Manager's residence listing exactly after bootstrap, more saves, and deletes")
    void pythonIndexEqualsEveryManager() throws Exception {
        ManagerProcess m1 = managers.get(0);
        ManagerProcess m2 = managers.get(1);
        save(m1, "model-a", 0, 20, 1);
        save(m1, "model-b", 0, 5, 1);
        save(m2, "model-a", 100, 110, 1);

        String incarnation = startPython();
        int first = compare("after bootstrap");
        assertThat(first).as("residences compared").isEqualTo((20 + 5 + 10) * 2);
        for (ManagerProcess m : managers) {
            JsonNode status = api(m).status();
            assertThat(status.at("/membership/members").asInt()).as("%s admits the Python requester", m).isEqualTo(3);
            assertThat(status.at("/coverage").asText()).as("%s coverage with a requester-only member", m)
                    .isEqualTo("CompleteAtWatermarks");
            assertThat(status.at("/sessions/served").toString()).as("%s serves the Python requester", m)
                    .contains(incarnation.split("/")[2]);
        }

        save(m1, "model-a", 15, 30, 2);     // 5 overwrites (new generations) and 10 new keys
        save(m2, "model-c", 0, 12, 2);
        save(m2, "model-a", 100, 103, 3);
        int second = compare("after more saves");
        assertThat(second).isEqualTo((30 + 5 + 10 + 12) * 2);

        evict(m1, "model-a", List.of(key(0), key(1), key(2), key(3)), "DRAM");
        evict(m1, "model-b", List.of(key(0), key(1), key(2), key(3), key(4)), "ALL");
        evict(m2, "model-c", List.of(key(0), key(5)), "SSD");
        evict(m2, "model-a", List.of(key(100)), "ALL");
        int third = compare("after deletes and evictions");
        assertThat(third).isEqualTo((30 + 10 + 12) * 2 - 4 - 2 - 2);

        assertThat(python.isAlive()).as("stderr: %s", pythonErr).isTrue();
        synchronized (pythonErr) {
            assertThat(pythonErr.toString()).as("the Python requester refused nothing and lost no session")
                    .doesNotContain("closing session").doesNotContain("session to").doesNotContain("Traceback");
        }
        System.out.printf("ExternalRequesterGateTest: residences compared exactly: %d, %d, %d%n", first, second, third);
    }
}
