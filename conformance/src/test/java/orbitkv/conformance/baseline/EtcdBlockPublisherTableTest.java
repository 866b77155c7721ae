package orbitkv.conformance.baseline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import orbitkv.conformance.baseline.EtcdTxnPort.BlockOp;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.inventory.TableSyntax;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.MutationResult;
import orbitkv.testing.TableRows;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * PUB-2 and PUB-3 (and the frozen baseline's PERF-5 shape) on real etcd: the rows of
 * {@code tables/baseline/etcd-publisher.table}, each checked after every committed transaction against an
 * independent model of the resident map (never against the publisher's own state).
 */
@Tag("gate")
class EtcdBlockPublisherTableTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();
    static Client client;

    @BeforeAll
    static void connect() {
        client = Client.builder().endpoints(ETCD.endpoints().urls()).build();
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    @TestFactory
    Stream<DynamicTest> rows() throws Exception {
        return TableSyntax.rows("baseline", "etcd-publisher.table", 4).stream()
                .map(row -> DynamicTest.dynamicTest(row.name(), () -> run(row)));
    }

    /** The model: the resident map after each sequence, computed from the mutations alone. */
    static final class Model {
        final List<Map<String, long[]>> states = new ArrayList<>(); // states.get(s) = after sequence s

        Model(BaselineKeys keys, String owner, List<TableSyntax.Mutation> mutations) {
            Map<String, long[]> m = new TreeMap<>();
            states.add(Map.copyOf(m));
            long seq = 0;
            for (TableSyntax.Mutation x : mutations) {
                switch (x) {
                    case TableSyntax.Put p -> {
                        m.put(keys.block(owner, p.key(), p.medium()), new long[] {++seq, p.size()});
                        states.add(Map.copyOf(m));
                    }
                    case TableSyntax.Del d -> {
                        if (m.remove(keys.block(owner, d.key(), d.medium())) != null) {
                            ++seq;
                            states.add(Map.copyOf(m));
                        }
                    }
                    case TableSyntax.Absent a -> { }
                }
            }
        }

        Map<String, long[]> at(long s) {
            return states.get((int) s);
        }

        long head() {
            return states.size() - 1;
        }
    }

    /** Thrown by the port after a committed attempt to stop the publisher as a crash would. */
    static final class Crash extends RuntimeException {
        Crash() {
            super("injected crash", null, false, false);
        }
    }

    /** Injects the row's faults around the real port and checks the model after every committed attempt. */
    final class FaultyPort implements EtcdTxnPort {
        final JetcdTxnPort real = new JetcdTxnPort(client, 2_000, false);
        final Map<Integer, List<String>> faults;
        final BaselineKeys keys;
        final String owner;
        final Model model;
        int attempts;
        boolean faultsActive = true;

        FaultyPort(Map<Integer, List<String>> faults, BaselineKeys keys, String owner, Model model) {
            this.faults = faults;
            this.keys = keys;
            this.owner = owner;
            this.model = model;
        }

        @Override
        public TxnResult commit(String cursorKey, long expected, List<BlockOp> ops, String cursorValue) throws AmbiguousResult {
            int n = ++attempts;
            List<String> f = faultsActive ? faults.getOrDefault(n, List.of()) : List.of();
            if (f.contains("foreign")) {
                ETCD.put(cursorKey, new PublisherCursor(0, 999, 0, 0, 0, 0).encode());
            }
            if (f.contains("lost-request")) {
                throw new AmbiguousResult("injected lost request (attempt " + n + ")", null);
            }
            TxnResult r = real.commit(cursorKey, expected, ops, cursorValue);
            if (r instanceof TxnResult.Committed) {
                checkModel();
            }
            if (f.contains("lost-reply")) {
                if (f.contains("crash-after")) {
                    faultsActive = false;
                    throw new Crash();
                }
                throw new AmbiguousResult("injected lost reply (attempt " + n + ")", null);
            }
            if (f.contains("crash-after")) {
                faultsActive = false;
                throw new Crash();
            }
            return r;
        }

        @Override
        public Optional<StoredCursor> readCursor(String cursorKey) throws AmbiguousResult {
            return real.readCursor(cursorKey);
        }

        @Override
        public void close() {}

        /** PUB-2/PUB-3 oracle: every residence is at its state at the covered cursor or at the window's end. */
        void checkModel() {
            PublisherCursor c = storedCursor(keys, owner).orElseThrow();
            Map<String, long[]> etcd = blocks(keys, owner);
            Map<String, long[]> before = model.at(c.covered());
            Map<String, long[]> after = c.inWindow() ? model.at(c.windowTo()) : before;
            java.util.Set<String> all = new java.util.TreeSet<>(before.keySet());
            all.addAll(after.keySet());
            all.addAll(etcd.keySet());
            for (String k : all) {
                long[] e = etcd.get(k);
                assertThat(same(e, before.get(k)) || same(e, after.get(k)))
                        .as("cursor %s: %s in etcd is %s; model at covered %s, at window end %s", c.encode(), k, str(e),
                                str(before.get(k)), str(after.get(k)))
                        .isTrue();
            }
            if (c.inWindow()) {
                assertThat(c.covered()).as("PUB-3 a window in progress keeps the previous covered cursor").isEqualTo(c.windowFrom());
            } else {
                assertThat(c.covered()).as("PUB-2 a complete window covers its input end").isEqualTo(c.windowTo());
            }
        }
    }

    private void run(TableRows.Row row) throws Exception {
        String owner = "o1";
        BaselineKeys keys = new BaselineKeys("t-" + UUID.randomUUID().toString().substring(0, 8));
        Map<String, String> cfg = TableSyntax.options(row.column(0));
        PublisherConfig config = cfg.containsKey("frozen") ? PublisherConfig.frozen() : PublisherConfig.coalescing(0);
        if (cfg.containsKey("ops")) {
            config = config.withOpsPerTxnMax(Integer.parseInt(cfg.get("ops")));
        }
        List<TableSyntax.Mutation> mutations = TableSyntax.mutations(row.column(1));
        SignalledSource source = SignalledSource.create(InventoryConfig.defaults());
        for (TableSyntax.Mutation m : mutations) {
            MutationResult r = switch (m) {
                case TableSyntax.Put p -> source.put(p.key(), p.medium(), p.size());
                case TableSyntax.Del d -> source.delete(d.key(), d.medium());
                case TableSyntax.Absent a -> source.delete(a.key(), a.medium());
            };
            assertThat(r).isNotNull();
        }
        Model model = new Model(keys, owner, mutations);
        assertThat(source.headSequence()).as("the model's sequences match the source").isEqualTo(model.head());
        Map<Integer, List<String>> faults = new HashMap<>();
        if (!row.column(2).equals("-")) {
            for (String f : row.column(2).split(";")) {
                String[] p = f.strip().split("@");
                faults.computeIfAbsent(Integer.parseInt(p[1]), x -> new ArrayList<>()).add(p[0]);
            }
        }
        Map<String, String> expected = TableSyntax.options(row.column(3));
        FaultyPort port = new FaultyPort(faults, keys, owner, model);
        EtcdBlockPublisher first = EtcdBlockPublisher.open(owner, source, keys, config, port);
        long ambiguous = 0;
        long replays = 0;
        long multi = 0;
        if (expected.containsKey("fenced")) {
            assertThatThrownBy(first::publishAvailable).as("PUB-3 another writer's cursor fences the publisher")
                    .isInstanceOf(EtcdBlockPublisher.PublisherFenced.class);
            return;
        }
        try {
            first.publishAvailable();
            assertThat(expected).as("the row expects a crash").doesNotContainKey("at-crash");
        } catch (Crash crash) {
            PublisherCursor at = storedCursor(keys, owner).orElseThrow();
            assertThat(at.covered() + ":" + at.chunksDone() + "/" + at.chunksTotal()).as("stored cursor at the crash (PUB-2, PUB-3)")
                    .isEqualTo(expected.get("at-crash"));
            ambiguous += first.ambiguous.get();
            replays += first.replays.get();
            multi += first.multiTxnWindows.get();
            first = EtcdBlockPublisher.open(owner, source, keys, config, port);
            first.publishAvailable();
        }
        ambiguous += first.ambiguous.get();
        replays += first.replays.get();
        multi += first.multiTxnWindows.get();
        // The end state: etcd holds exactly the resident map, the cursor covers the head.
        assertThat(render(blocks(keys, owner))).as("etcd block keys = the model's resident map").isEqualTo(render(model.at(model.head())));
        assertThat(storedCursor(keys, owner).orElseThrow().covered()).isEqualTo(Long.parseLong(expected.get("covered")));
        assertThat(storedCursor(keys, owner).orElseThrow().inWindow()).isFalse();
        if (expected.containsKey("attempts")) {
            assertThat(port.attempts).as("transaction attempts").isEqualTo(Integer.parseInt(expected.get("attempts")));
        }
        if (expected.containsKey("multi")) {
            assertThat(multi).as("multi-transaction windows").isEqualTo(Long.parseLong(expected.get("multi")));
        }
        if (expected.containsKey("ambiguous")) {
            assertThat(ambiguous).as("ambiguous results").isEqualTo(Long.parseLong(expected.get("ambiguous")));
        }
        if (expected.containsKey("replays")) {
            assertThat(replays).as("replayed transactions").isEqualTo(Long.parseLong(expected.get("replays")));
        }
    }

    static Optional<PublisherCursor> storedCursor(BaselineKeys keys, String owner) {
        String v = ETCD.get(keys.cursor(owner));
        return Optional.ofNullable(v).map(PublisherCursor::parse);
    }

    /** The owner's block keys in etcd: key -> {sequence, size}. */
    static Map<String, long[]> blocks(BaselineKeys keys, String owner) {
        try {
            ByteSequence prefix = ByteSequence.from(keys.blockPrefix(owner), StandardCharsets.UTF_8);
            Map<String, long[]> out = new TreeMap<>();
            for (KeyValue kv : client.getKVClient().get(prefix, GetOption.builder().isPrefix(true).build()).get(5, TimeUnit.SECONDS).getKvs()) {
                out.put(kv.getKey().toString(StandardCharsets.UTF_8), BaselineKeys.parseBlockValue(kv.getValue().getBytes()));
            }
            return out;
        } catch (Exception e) {
            throw new AssertionError("cannot read baseline blocks", e);
        }
    }

    static boolean same(long[] a, long[] b) {
        return a == null ? b == null : b != null && a[0] == b[0] && a[1] == b[1];
    }

    static String str(long[] v) {
        return v == null ? "absent" : "seq " + v[0] + " size " + v[1];
    }

    static String render(Map<String, long[]> m) {
        StringBuilder b = new StringBuilder();
        new TreeMap<>(m).forEach((k, v) -> b.append(k).append('=').append(v[0]).append(',').append(v[1]).append('\n'));
        return b.toString();
    }

}
