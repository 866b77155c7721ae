package orbitkv.conformance.campaign;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.conformance.manager.ManagerApi;

/**
 * The campaign's load (issue 17 item 2): one thread per source node issues saves (1–3 keys, known payloads
 * with the PERF-4 header) and single-key evicts, one at a time, and records each outcome in that node's
 * {@link SourceModel}: acknowledged, failed (refused, or the connection was never made: nothing happened),
 * or indeterminate (the request may or may not have been applied).
 */
final class Workload {
    static final int KEYS_PER_SOURCE = 40;
    private static final AtomicLong GENERATIONS = new AtomicLong();

    final AtomicLong ok = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong indeterminate = new AtomicLong();
    private final CampaignCluster cluster;
    private final Map<String, SourceModel> models;
    private final Violations violations;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running;
    /** Delay between two operations of one source, milliseconds; lowered for bursts. */
    private volatile int pauseMinMs = 80;
    private volatile int pauseMaxMs = 150;

    Workload(CampaignCluster cluster, Map<String, SourceModel> models, Violations violations) {
        this.cluster = cluster;
        this.models = models;
        this.violations = violations;
    }

    /** The key {@code i} of source {@code node}: 16 bytes, the node's letter first, lowercase hex. */
    static String key(String node, int i) {
        return String.format("%02x%030x", (int) node.charAt(0), i);
    }

    static List<String> keys(String node) {
        List<String> out = new ArrayList<>(KEYS_PER_SOURCE);
        for (int i = 0; i < KEYS_PER_SOURCE; i++) {
            out.add(key(node, i));
        }
        return out;
    }

    static int index(String key) {
        return Integer.parseInt(key.substring(2), 16);
    }

    /** Payload bytes of generation {@code g}: sizes vary with the generation. */
    static int size(long g) {
        return 512 + (int) (g % 8) * 256;
    }

    static byte[] payload(long g, String key) {
        return ManagerApi.payload(g, index(key), size(g));
    }

    /** Faster operations (journal retention overrun) or back to the normal pace. */
    void burst(boolean on) {
        pauseMinMs = on ? 2 : 80;
        pauseMaxMs = on ? 6 : 150;
    }

    void start(long seed) {
        running = true;
        int i = 0;
        for (String node : cluster.nodes.keySet()) {
            SplittableRandom r = new SplittableRandom(seed * 31 + (i++));
            threads.add(Thread.ofPlatform().daemon(true).name("campaign-load-" + node).start(() -> run(node, r)));
        }
    }

    void stop() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(30_000);
        }
        threads.clear();
    }

    private void run(String node, SplittableRandom r) {
        while (running) {
            CampaignCluster.Node n = cluster.node(node);
            if (n.process != null && n.process.alive() && !n.stopped) {
                if (r.nextInt(10) < 7) {
                    save(n, r);
                } else {
                    evict(n, r);
                }
            }
            try {
                Thread.sleep(pauseMinMs + r.nextInt(pauseMaxMs - pauseMinMs + 1)); // the load's pace, not synchronization
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void save(CampaignCluster.Node n, SplittableRandom r) {
        Map<String, Long> gens = new LinkedHashMap<>();
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        int count = 1 + r.nextInt(3);
        while (gens.size() < count) {
            String k = key(n.name, r.nextInt(KEYS_PER_SOURCE));
            long g = GENERATIONS.incrementAndGet();
            if (gens.putIfAbsent(k, g) == null) {
                blocks.put(k, payload(g, k));
            }
        }
        SourceModel model = models.get(n.name);
        Object process = n.process;
        ManagerApi.Reply reply;
        try {
            reply = n.api.save(CampaignCluster.NAMESPACE, blocks);
        } catch (UncheckedIOException e) {
            if (n.process == process) {
                outcomeUnknown(e, model, gens);
            } else {
                failed.incrementAndGet(); // the process it went to is gone: nothing of it survives
            }
            return;
        }
        if (n.process != process) {
            failed.incrementAndGet(); // answered by a process that has been replaced since
            return;
        }
        if (reply.status() != 200) {
            failed.incrementAndGet();
            return;
        }
        JsonNode j = reply.json();
        Map<String, Long> sequences = new LinkedHashMap<>();
        for (JsonNode s : j.get("saved")) {
            sequences.put(s.get("key").asText(), s.get("sequence").asLong());
        }
        if (j.has("refused") && !j.get("refused").isEmpty()) {
            violations.add(Property.RELIABLE, n.name + ": save refused records of a cache sized to hold them: " + j.get("refused"));
        }
        ok.incrementAndGet();
        model.saved(gens, sequences);
    }

    private void evict(CampaignCluster.Node n, SplittableRandom r) {
        String k = key(n.name, r.nextInt(KEYS_PER_SOURCE));
        SourceModel model = models.get(n.name);
        Object process = n.process;
        ManagerApi.Reply reply;
        try {
            reply = n.api.evict(CampaignCluster.NAMESPACE, List.of(k), r.nextBoolean() ? "DRAM" : "ALL");
        } catch (UncheckedIOException e) {
            if (n.process == process) {
                outcomeUnknown(e, model, Map.of(k, SourceModel.ABSENT));
            } else {
                failed.incrementAndGet();
            }
            return;
        }
        if (n.process != process) {
            failed.incrementAndGet();
            return;
        }
        if (reply.status() != 200) {
            failed.incrementAndGet();
            return;
        }
        ok.incrementAndGet();
        JsonNode j = reply.json();
        violations.addAll(Property.RELIABLE, model.evicted(k, j.get("evicted").asLong(), j.get("head_sequence").asLong()));
    }

    /** A refused connection changed nothing; any other I/O failure may have come after the request was applied. */
    private void outcomeUnknown(UncheckedIOException e, SourceModel model, Map<String, Long> outcomes) {
        if (e.getCause() instanceof ConnectException) {
            failed.incrementAndGet();
        } else {
            indeterminate.incrementAndGet();
            model.indeterminate(outcomes);
        }
    }

    String opsSummary() {
        return ok.get() + "/" + failed.get() + "/" + indeterminate.get();
    }
}
