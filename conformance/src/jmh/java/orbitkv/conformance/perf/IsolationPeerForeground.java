package orbitkv.conformance.perf;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.testing.Await;

/**
 * The fourth timed operation of an isolation round, {@link IsolationHarness.Op#PEER_RESTORE} (issue 37 item 4: peer
 * restores and pipelined READs in the foreground). A second Manager of the run's cluster, the <em>data peer</em>,
 * holds the blocks; the measured Manager restores them over the peer TCP route. Per round, untimed: the data peer
 * saves {@code blocks} blocks with the PERF-4 header (generation = round, block index) under {@link #NS}, over keys
 * periodic in {@link IsolationHarness#KEY_PERIOD} rounds and distinct from the local foreground's; its
 * {@code /cache/sync} fence is awaited at the measured Manager ({@code /cache/metadata/await}, which asks the session
 * to flush through the fence rather than wait out the coalescing window), and then a bounded await until the
 * measured Manager's query lists the data peer's DRAM replica of every key at the sequence the save answered. Timed:
 * one {@code POST /cache/restore} with transfer backend {@code tcp}. With blocks of at most 1 MiB together the
 * requester pipelines up to 4 READs of the route's grant per data connection (docs/transfer.md, <em>Pipelining</em>),
 * so 8 blocks of 64 KiB (the formal foreground) are pipelined READs. Checked: every byte and the PERF-4 header of
 * every block, and a route header that names a peer DRAM route of the data peer over TCP for every block.
 */
final class IsolationPeerForeground {
    static final String NS = "isolation/peer-foreground";
    static final String NODE = "data-peer";
    /** Added to the slot of the key's first half: the data peer's keys never equal the local foreground's. */
    private static final long KEY_BASE = 0x7065_6572_0000_0000L;
    /** The timed restore's deadline: far above any foreground restore, so only a stuck route reaches it. */
    private static final long DEADLINE_MS = 10_000;
    /** The await's own timeout (the Manager caps it at 30 s). */
    private static final long AWAIT_MS = 20_000;
    private static final Pattern RANGE = Pattern.compile("\\[(\\d+),(\\d+)\\)");

    private final ManagerApi measured;
    private final ManagerApi dataPeer;
    private final String dataPeerIncarnation;
    private final String scopeDigest;
    private final int blocks;
    private final int blockBytes;
    private final Duration bound;

    private IsolationPeerForeground(ManagerApi measured, ManagerApi dataPeer, String dataPeerIncarnation, String scopeDigest, int blocks,
            int blockBytes, Duration bound) {
        this.measured = measured;
        this.dataPeer = dataPeer;
        this.dataPeerIncarnation = dataPeerIncarnation;
        this.scopeDigest = scopeDigest;
        this.blocks = blocks;
        this.blockBytes = blockBytes;
        this.bound = bound;
    }

    /**
     * Waits (bounded) until each Manager has installed the other's view, so the measured Manager lists the data
     * peer's blocks and the data peer admits the measured Manager's READs; then the foreground is ready.
     */
    static IsolationPeerForeground ready(ManagerApi measured, String measuredIncarnation, ManagerApi dataPeer, String dataPeerIncarnation,
            int blocks, int blockBytes, Duration bound) {
        Await.until("the measured Manager's installed view of the data peer " + dataPeerIncarnation, bound,
                () -> installed(measured.status(), dataPeerIncarnation));
        Await.until("the data peer's installed view of the measured Manager " + measuredIncarnation, bound,
                () -> installed(dataPeer.status(), measuredIncarnation));
        String digest = measured.status().at("/scope/digest").asText();
        return new IsolationPeerForeground(measured, dataPeer, dataPeerIncarnation, digest, blocks, blockBytes, bound);
    }

    private static boolean installed(JsonNode status, String incarnation) {
        for (JsonNode o : status.get("owners")) {
            if (o.at("/owner/incarnation").asText().equals(incarnation) && "INSTALLED".equals(o.get("state").asText())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Round {@code k}'s peer restore: the untimed save and visibility wait, then the timed restore.
     *
     * @return {start ns, end ns, blocks served by the data peer over TCP}; a failed check throws (collection fails)
     */
    long[] round(int k, long generation) {
        int slot = k % IsolationHarness.KEY_PERIOD;
        Map<String, byte[]> saved = new LinkedHashMap<>();
        for (int j = 0; j < blocks; j++) {
            saved.put(String.format("%016x%016x", KEY_BASE + slot, j), ManagerApi.payload(generation, j, blockBytes));
        }
        List<String> keys = List.copyOf(saved.keySet());
        ManagerApi.Reply save = dataPeer.save(NS, saved);
        IsolationHarness.require(save.status() == 200 && save.json().get("saved").size() == keys.size(), k, "data peer save", save);
        long[] sequences = new long[keys.size()];
        for (int j = 0; j < keys.size(); j++) {
            sequences[j] = save.json().get("saved").get(j).get("sequence").asLong();
        }
        visible(k, keys, sequences);
        long start = System.nanoTime();
        ManagerApi.Reply restore = measured.restore(NS, keys, "tcp", DEADLINE_MS);
        long end = System.nanoTime();
        int served = check(k, generation, saved, restore);
        return new long[] {start, end, served};
    }

    /** The data peer's fence awaited at the measured Manager, then its query lists every key at the saved sequence. */
    private void visible(int k, List<String> keys, long[] sequences) {
        ManagerApi.Reply sync = dataPeer.sync();
        IsolationHarness.require(sync.status() == 200 && sync.json().hasNonNull("inventory_fence"), k, "data peer sync (its fence)", sync);
        ManagerApi.Reply await = measured.await(sync.json().get("inventory_fence"), scopeDigest, AWAIT_MS);
        IsolationHarness.require(await.status() == 200, k, "await of the data peer's fence at the measured Manager", await);
        Await.until("round " + k + ": the measured Manager's query lists the data peer's DRAM replica of all " + keys.size() + " keys",
                bound, () -> listed(measured.queryFullOnly(NS, keys), sequences));
    }

    private boolean listed(ManagerApi.Reply query, long[] sequences) {
        if (query.status() != 200) {
            return false;
        }
        JsonNode candidates = query.json().get("candidates");
        for (int j = 0; j < sequences.length; j++) {
            boolean seen = false;
            for (JsonNode rep : candidates.get(j).get("replicas")) {
                seen |= rep.at("/owner/incarnation").asText().equals(dataPeerIncarnation) && "DRAM".equals(rep.get("medium").asText())
                        && !rep.get("stale").asBoolean() && rep.get("sequence").asLong() == sequences[j];
            }
            if (!seen) {
                return false;
            }
        }
        return true;
    }

    /** Every byte and header, and a route header naming the data peer's DRAM over TCP for every block. */
    private int check(int k, long generation, Map<String, byte[]> saved, ManagerApi.Reply restore) {
        List<String> keys = new ArrayList<>(saved.keySet());
        IsolationHarness.require(restore.status() == 200 && Integer.toString(keys.size()).equals(restore.header("X-OrbitKV-Restored")), k,
                "peer restore", restore);
        Map<String, byte[]> got = ManagerApi.unframe(restore.body());
        for (int j = 0; j < keys.size(); j++) {
            byte[] p = got.get(keys.get(j));
            long[] h = p == null || p.length < 16 ? new long[] {-1, -1} : ManagerApi.header(p);
            if (p == null || !Arrays.equals(p, saved.get(keys.get(j))) || h[0] != generation || h[1] != j) {
                throw new VisibilityHarness.CollectionFailed("round " + k + ": peer-restored block " + keys.get(j) + " is not byte-exact (header "
                        + Arrays.toString(h) + ", expected [" + generation + ", " + j + "])");
            }
        }
        String route = restore.header("X-OrbitKV-Route");
        int served = servedByDataPeer(route, keys.size());
        IsolationHarness.require(served == keys.size(), k, "peer restore not served by " + NODE + " over TCP for every block (route " + route + ")",
                restore);
        return served;
    }

    /**
     * Blocks of a complete restore of {@code n} blocks served from {@link #NODE}'s DRAM over the peer TCP route, or
     * -1 when the header names any other route (local, shared memory, another node) or an incomplete restore.
     * Example: {@code r=8 stop=complete routes=peer-dram@data-peer/1[0,8):ready+tcp}.
     */
    static int servedByDataPeer(String route, int n) {
        String want = "r=" + n + " stop=complete routes=";
        if (route == null || !route.startsWith(want)) {
            return -1;
        }
        String runs = route.substring(want.length());
        if (!RestoreHarness.servedBy(runs, RestoreHarness.Arm.PEER_TCP)) {
            return -1;
        }
        int served = 0;
        for (String run : runs.split(",(?![0-9])")) { // a range "[0,16)" holds a comma too
            Matcher m = RANGE.matcher(run);
            if (!run.startsWith("peer-dram@" + NODE + "/") || !m.find()) {
                return -1;
            }
            served += Integer.parseInt(m.group(2)) - Integer.parseInt(m.group(1));
        }
        return served;
    }
}
