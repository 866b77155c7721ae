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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
 * IDX-6 (issue 40 item 4): Manager m1 changes its subscription scope with {@code POST /cache/scope} from
 * {@code [ns-a, ns-b]} to {@code [ns-b, ns-c]} while m2 saves new keys into all three namespaces and m1 is queried
 * without pause, with the second-language requester ({@code conformance/src/test/python/requester.py}, written from
 * the documents alone, subscribed to every namespace) as the oracle of m2's inventory. Checked: every query before,
 * during and after the change is answered by one scope generation, and the switch is one step in the query stream
 * (ns-a answered, ns-c Unavailable ... then ns-a Unavailable, ns-c answered; never back), ns-b (in both scopes) is never
 * Unavailable and a key of it once listed stays listed (a generation serves only when complete); an Unavailable answer lists no remote replica; after await of an m2 fence with the serving scope digest,
 * before and after the change, every key of every namespace in scope saved before the fence is listed (exact
 * completeness); every replica m1 ever listed for m2 equals the Python requester's row exactly (medium, sequence,
 * size), and the Python index equals m2's own residence listing. Bad bodies are named 400s that change nothing.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ScopeChangeGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> NAMESPACES = List.of("ns-a", "ns-b", "ns-c");

    private final String cluster = "scope-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    private Path work;
    private ManagerProcess m1;
    private ManagerProcess m2;
    private Process python;
    private Writer pythonIn;
    private final BlockingQueue<String> pythonOut = new LinkedBlockingQueue<>(10_000);
    private final StringBuilder pythonErr = new StringBuilder();
    /** Keys m2 acknowledged (save 200), per namespace, in save order. */
    private final Map<String, List<String>> saved = new ConcurrentHashMap<>();
    /** Every remote replica m1 listed: "ns key medium" -> "sequence size" (rows never change: no overwrite, no evict). */
    private final Map<String, String> listed = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    /** ns-b (in both scopes) keys m1 listed with an m2 replica at least once. */
    private final java.util.Set<String> listedB = ConcurrentHashMap.newKeySet();

    @BeforeAll
    void startCluster() throws Exception {
        work = Files.createTempDirectory("orbitkv-scope-change-");
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        m1 = launch("m1", "--metadata-namespace", "ns-a", "--metadata-namespace", "ns-b");
        m2 = launch("m2");
        for (ManagerProcess m : List.of(m1, m2)) {
            m.awaitReady();
        }
        for (ManagerProcess m : List.of(m1, m2)) {
            Await.until(m + " admits two members", BOUND, () -> api(m).status().at("/membership/members").asInt() == 2);
        }
        NAMESPACES.forEach(ns -> saved.put(ns, new CopyOnWriteArrayList<>()));
    }

    private ManagerProcess launch(String node, String... scope) throws IOException {
        Path dir = work.resolve(node);
        List<String> args = ManagerProcess.distributedArgs(cluster, node, ETCD.endpoints().toString(),
                Files.createDirectories(dir.resolve("dram")), "--dram", "64MiB", "--block-bytes-max", "1MiB",
                "--shutdown-drain-ms", "2000", "--idle-liveness-ms", "500");
        args.addAll(List.of(scope));
        args.addAll(ManagerProcess.LOAD_TOLERANT_LEASE);
        return ManagerProcess.launch(node, work.resolve("logs"), args);
    }

    @AfterAll
    void stopAll() throws IOException, InterruptedException {
        if (python != null && python.isAlive()) {
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
        for (ManagerProcess m : new ManagerProcess[] {m1, m2}) {
            if (m != null) {
                m.close();
            }
        }
        ManagerProcess.deleteTree(work);
    }

    private static ManagerApi api(ManagerProcess m) {
        return new ManagerApi(m.httpBase());
    }

    // ------------------------------------------------------------------ the Python requester (oracle of m2)

    private void startPython() throws Exception {
        Path root = MarkdownTable.root();
        Path gen = Files.createDirectories(work.resolve("pb"));
        Process protoc = new ProcessBuilder("protoc", "--python_out=" + gen,
                "-I", root.resolve("orbitkv.inventory/src/main/proto").toString(),
                "orbitkv/inventory/v4/inventory_session.proto").redirectErrorStream(true).start();
        String protocOut = new String(protoc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(protoc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(protoc.exitValue()).as("protoc (scripts/lib/python-grpc.sh installs it): %s", protocOut).isZero();
        python = new ProcessBuilder("/usr/bin/python3", root.resolve("conformance/src/test/python/requester.py").toString(),
                "--etcd", ETCD.endpoints().toString().split(",")[0], "--cluster", cluster, "--node-id", "py-oracle",
                "--pb-dir", gen.resolve("orbitkv/inventory/v4").toString()).start();
        pythonIn = new OutputStreamWriter(python.getOutputStream(), StandardCharsets.UTF_8);
        Thread.ofPlatform().daemon(true).name("python-out").start(() -> pump(python.getInputStream(), true));
        Thread.ofPlatform().daemon(true).name("python-err").start(() -> pump(python.getErrorStream(), false));
        String ready = pythonOut.poll(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertThat(ready).as("the requester's READY line; stderr: %s", pythonErr).isNotNull().startsWith("READY py-oracle/");
    }

    private void pump(java.io.InputStream in, boolean out) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
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

    /** The Python requester's index of {@code node}: null if it has none yet. */
    private synchronized JsonNode pythonView(String node) {
        try {
            pythonIn.write("dump\n");
            pythonIn.flush();
            String line = pythonOut.poll(10, TimeUnit.SECONDS);
            assertThat(line).as("an INDEX line; stderr: %s", pythonErr).isNotNull().startsWith("INDEX ");
            return JSON.readTree(line.substring("INDEX ".length())).get(node);
        } catch (IOException | InterruptedException e) {
            throw new AssertionError("the Python requester did not answer; stderr: " + pythonErr, e);
        }
    }

    /** m2's own listing ("ns key medium" -> "sequence size") and its head sequence. */
    private record Listing(Map<String, String> rows, long head) {}

    private static Listing residences(ManagerProcess m) {
        Map<String, String> rows = new LinkedHashMap<>();
        String cursor = null;
        long head;
        int pages = 0;
        do {
            ManagerApi.Reply r = api(m).get("/cache/metadata/residences?limit=500" + (cursor == null ? "" : "&cursor=" + cursor));
            assertThat(r.status()).as(r.text()).isEqualTo(200);
            JsonNode page = r.json();
            page.get("residences").forEach(e -> rows.put(e.get("namespace").asText() + " " + e.get("key").asText() + " "
                    + e.get("medium").asText(), e.get("sequence").asLong() + " " + e.get("size").asLong()));
            head = page.get("head_sequence").asLong();
            cursor = page.get("next_cursor").isNull() ? null : page.get("next_cursor").asText();
            assertThat(++pages).isLessThan(1000);
        } while (cursor != null);
        return new Listing(rows, head);
    }

    private static Map<String, String> rowsOf(JsonNode source) {
        Map<String, String> rows = new LinkedHashMap<>();
        source.get("residences").forEach(e -> rows.put(e.get(0).asText() + " " + e.get(1).asText() + " " + e.get(2).asText(),
                e.get(3).asLong() + " " + e.get(4).asLong()));
        return rows;
    }

    // ------------------------------------------------------------------ load and checks

    /** m2 saves new keys (never an overwrite or an evict) round-robin into the three namespaces until stopped. */
    private Thread loader(AtomicBoolean stop) {
        return Thread.ofPlatform().name("scope-loader").start(() -> {
            int n = 0;
            while (!stop.get() && n < 6_000) {
                String ns = NAMESPACES.get(n % 3);
                Map<String, byte[]> blocks = new LinkedHashMap<>();
                List<String> keys = new ArrayList<>();
                for (int i = 0; i < 4; i++, n++) {
                    String k = String.format("%06x", n);
                    keys.add(k);
                    blocks.put(k, ManagerApi.payload(1, n, 256 + n % 64));
                }
                ManagerApi.Reply r = api(m2).save(ns, blocks);
                if (r.status() == 200) {
                    saved.get(ns).addAll(keys);
                } else {
                    violations.add("m2 save answered " + r.status() + ": " + r.text());
                }
            }
        });
    }

    /** One query of m1: checks one answer, records its replicas of m2, returns whether it answered (not Unavailable). */
    private boolean check(String ns, Random random) {
        List<String> all = saved.get(ns);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 16 && !all.isEmpty(); i++) {
            String k = all.get(random.nextInt(all.size()));
            if (!keys.contains(k)) {
                keys.add(k);
            }
        }
        if (keys.isEmpty()) {
            keys.add("ffffff");
        }
        ManagerApi.Reply r = api(m1).queryFullOnly(ns, keys);
        if (r.status() != 200) {
            violations.add("query " + ns + " answered " + r.status() + ": " + r.text());
            return false;
        }
        JsonNode answer = r.json();
        boolean answered = !"Unavailable".equals(answer.get("coverage").asText());
        JsonNode candidates = answer.get("candidates");
        for (int i = 0; i < candidates.size(); i++) {
            boolean listedNow = false;
            for (JsonNode rep : candidates.get(i).get("replicas")) {
                listedNow |= "m2".equals(rep.at("/owner/node_id").asText());
            }
            String nsKey = ns + " " + keys.get(i);
            if (ns.equals("ns-b") && listedNow) {
                listedB.add(nsKey);
            } else if (ns.equals("ns-b") && listedB.contains(nsKey)) {
                // rows never change and the next generation serves only once it installed every member the old one
                // had (its snapshot is taken after the old view's watermark): a key listed once stays listed
                violations.add(nsKey + " was listed and later missing: the answer came from a generation that was not complete");
            }
            for (JsonNode rep : candidates.get(i).get("replicas")) {
                if (rep.get("local").asBoolean()) {
                    continue;
                }
                if (!answered) {
                    violations.add("an Unavailable answer for " + ns + " lists a remote replica " + rep);
                }
                if (!"m2".equals(rep.at("/owner/node_id").asText())) {
                    violations.add("a replica of an unknown owner " + rep);
                }
                String row = ns + " " + keys.get(i) + " " + rep.get("medium").asText();
                String value = rep.get("sequence").asLong() + " " + rep.get("size").asLong();
                String before = listed.putIfAbsent(row, value);
                if (before != null && !before.equals(value)) {
                    violations.add(row + " listed as " + before + " and later as " + value);
                }
            }
        }
        return answered;
    }

    /**
     * The query stream: ns-a, ns-b, ns-c in turn until stopped. Phase OLD while ns-a is answered or ns-c Unavailable,
     * NEW once ns-a is Unavailable or ns-c answered; the stream's phases must never go back; ns-b is always answered.
     */
    private Thread checker(AtomicBoolean stop, AtomicReference<int[]> phases) {
        return Thread.ofPlatform().name("scope-checker").start(() -> {
            Random random = new Random(40);
            int[] count = new int[2];
            boolean sawNew = false;
            while (!stop.get()) {
                for (String ns : NAMESPACES) {
                    boolean answered = check(ns, random);
                    if (ns.equals("ns-b")) {
                        if (!answered) {
                            violations.add("ns-b (in both scopes) answered Unavailable");
                        }
                        continue;
                    }
                    boolean isNew = ns.equals("ns-a") != answered;
                    if (sawNew && !isNew) {
                        violations.add("a query of " + ns + " went back to the old scope after the new one answered");
                    }
                    sawNew |= isNew;
                    count[isNew ? 1 : 0]++;
                }
                phases.set(count.clone());
            }
        });
    }

    /**
     * Exact completeness at a fence (API-5): m2's fence awaited at m1 with the serving scope digest, then every key of
     * every namespace in scope that m2 acknowledged before the fence is listed with an m2 replica.
     */
    private void completeAtFence(List<String> inScope, String digest) {
        Map<String, List<String>> before = new HashMap<>();
        NAMESPACES.forEach(ns -> before.put(ns, List.copyOf(saved.get(ns))));
        JsonNode fence = api(m2).sync().json().get("inventory_fence");
        ManagerApi.Reply awaited = api(m1).await(fence, digest, 20_000);
        assertThat(awaited.status()).as(awaited.text()).isEqualTo(200);
        for (String ns : inScope) {
            List<String> keys = before.get(ns);
            for (int from = 0; from < keys.size(); from += 128) {
                List<String> chunk = keys.subList(from, Math.min(keys.size(), from + 128));
                JsonNode answer = api(m1).queryFullOnly(ns, chunk).json();
                assertThat(answer.get("coverage").asText()).as("%s after await", ns).isNotEqualTo("Unavailable");
                for (int i = 0; i < chunk.size(); i++) {
                    boolean found = false;
                    for (JsonNode rep : answer.get("candidates").get(i).get("replicas")) {
                        found |= "m2".equals(rep.at("/owner/node_id").asText());
                    }
                    assertThat(found).as("%s key %s saved before m2's fence is listed after the await", ns, chunk.get(i)).isTrue();
                }
            }
        }
    }

    private void badBodiesChangeNothing() {
        JsonNode before = api(m1).status().get("scope");
        Map<String, String> bodies = Map.of(
                "{}", "MISSING_FIELD",
                "{\"namespaces\": 3}", "INVALID_FIELD_TYPE",
                "{\"namespaces\": \"every\"}", "INVALID_FIELD_VALUE",
                "{\"namespaces\": [\"ns-b\", \"ns-b\"]}", "INVALID_FIELD_VALUE",
                "{\"namespaces\": [\"\"]}", "INVALID_NAMESPACE",
                "{\"namespaces\": [\"ns-c\"], \"timeout_ms\": 0}", "INVALID_FIELD_VALUE",
                "not json", "MALFORMED_JSON");
        bodies.forEach((body, code) -> {
            ManagerApi.Reply r = api(m1).postJson("/cache/scope", body);
            assertThat(r.status()).as(body + " -> " + r.text()).isEqualTo(400);
            assertThat(r.json().at("/error/code").asText()).as(body).isEqualTo(code);
        });
        assertThat(api(m1).status().get("scope")).as("no state change").isEqualTo(before);
    }

    @Test
    @DisplayName("IDX-6 a scope change under load: one generation per answer, one switch, exact at fences before and after, rows equal to the second-language requester's")
    void scopeChangeUnderLoad() throws Exception {
        startPython();
        AtomicBoolean stopLoad = new AtomicBoolean();
        AtomicBoolean stopChecks = new AtomicBoolean();
        AtomicReference<int[]> phases = new AtomicReference<>(new int[2]);
        Thread load = loader(stopLoad);
        Await.until("m2 saved into every namespace", BOUND, () -> saved.values().stream().allMatch(l -> l.size() >= 40));
        JsonNode before = api(m1).status().get("scope");
        assertThat(before.get("generation").asLong()).isEqualTo(1);
        completeAtFence(List.of("ns-a", "ns-b"), before.get("digest").asText());
        Thread checks = checker(stopChecks, phases);
        Await.until("queries before the change", BOUND, () -> phases.get()[0] >= 30);
        badBodiesChangeNothing();

        ManagerApi.Reply change = api(m1).postJson("/cache/scope", "{\"namespaces\": [\"ns-c\", \"ns-b\"], \"timeout_ms\": 60000}");
        assertThat(change.status()).as(change.text()).isEqualTo(202);
        assertThat(change.json().get("generation").asLong()).isEqualTo(2);
        assertThat(change.json().get("state").asText()).isEqualTo("bootstrapping");
        String newDigest = change.json().get("scope_digest").asText();
        ManagerApi.Reply again = api(m1).postJson("/cache/scope", "{\"namespaces\": [\"ns-b\", \"ns-c\"]}");
        assertThat(again.status()).as("the same change again: refused while pending, 'current' once swapped").isIn(409, 200);
        if (again.status() == 409) {
            assertThat(again.json().at("/error/code").asText()).isEqualTo("SCOPE_CHANGE_PENDING");
        }
        Await.until("m1 serves scope generation 2", BOUND, () -> {
            JsonNode s = api(m1).status().get("scope");
            return s.get("generation").asLong() == 2 && s.get("pending").isNull();
        });
        JsonNode after = api(m1).status().get("scope");
        assertThat(after.get("digest").asText()).isEqualTo(newDigest);
        assertThat(after.get("namespaces")).hasSize(2);
        assertThat(after.get("changes").get("swapped").asLong()).as(after.toString()).isEqualTo(1);
        assertThat(after.get("changes").get("abandoned").asLong()).as(after.toString()).isZero();
        assertThat(after.at("/changes/refused_pending").asLong()).isEqualTo(again.status() == 409 ? 1 : 0);
        Await.until("queries after the change", BOUND, () -> phases.get()[1] >= 30);
        List<String> nowInScope = new ArrayList<>();
        after.get("namespaces").forEach(n -> nowInScope.add(n.asText()));
        completeAtFence(nowInScope, after.get("digest").asText());
        stopChecks.set(true);
        checks.join(30_000);
        stopLoad.set(true);
        load.join(30_000);
        assertThat(violations).as("violations").isEmpty();
        exactAgainstOracle();
        System.out.printf("ScopeChangeGateTest: second request answered %d; queries old scope %d, new scope %d; ns-b keys "
                + "kept listed %d; remote rows checked %d; saved %s%n", again.status(),
                phases.get()[0], phases.get()[1], listedB.size(), listed.size(), saved.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue().size()).toList());
    }

    /** The Python requester's index of m2 equals m2's listing; every replica m1 listed for m2 equals its row. */
    private void exactAgainstOracle() {
        Listing[] listing = new Listing[1];
        JsonNode[] view = new JsonNode[1];
        Await.until("the Python requester's view of m2 reaches m2's head", BOUND, () -> {
            listing[0] = residences(m2);
            view[0] = pythonView("m2");
            return view[0] != null && view[0].get("watermark").asLong() == listing[0].head()
                    && residences(m2).head() == listing[0].head();
        });
        Map<String, String> oracle = rowsOf(view[0]);
        assertThat(oracle).as("the Python index of m2 vs m2's own listing").isEqualTo(listing[0].rows());
        assertThat(listed).as("replicas m1 listed for m2").isNotEmpty();
        listed.forEach((row, value) -> assertThat(oracle.get(row)).as("m1's replica %s", row).isEqualTo(value));
        synchronized (pythonErr) {
            assertThat(pythonErr.toString()).as("the Python requester lost no session").doesNotContain("Traceback");
        }
    }
}
