package orbitkv.server.demo;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What the demo observed, printed as one table at the end (errors listed, never hidden). */
final class DemoSummary {
    /** At most this many error messages are kept; beyond it only the count grows. */
    static final int ERROR_MESSAGES_MAX = 32;

    private long blocksSaved;
    private long bytesSaved;
    private long blocksRestored;
    private long bytesRestored;
    private long remoteCandidates;
    private long evicted;
    private long exclusionMs = -1;
    private String restart = "-";
    private String evictionVisibility = "-";
    private String rebootstrap = "-";
    private String visibility = "-";
    private final Map<String, Long> coverage = new TreeMap<>();
    /** Peer-restored blocks and bytes per route (route class + backend, a closed set of four). */
    private final Map<String, long[]> peerRoutes = new TreeMap<>();
    private final Map<String, String> readThroughput = new TreeMap<>();
    private String warmThroughput = "-";
    private final Map<String, Long> awaits = new TreeMap<>();
    private final Map<Integer, Long> sigtermExits = new TreeMap<>();
    private final List<String> errorMessages = new ArrayList<>();
    private long errors;

    synchronized void saved(long blocks, long bytes) {
        blocksSaved += blocks;
        bytesSaved += bytes;
    }

    synchronized void restored(long bytes) {
        blocksRestored++;
        bytesRestored += bytes;
    }

    synchronized void peerRestored(String route, long bytes) {
        long[] c = peerRoutes.computeIfAbsent(route, r -> new long[2]);
        c[0]++;
        c[1] += bytes;
    }

    /** READ throughput of one backend: completed READ bytes over their summed latency. */
    synchronized void readThroughput(String backend, long bytes, long latencyNanos) {
        readThroughput.put(backend, latencyNanos <= 0 ? "-" : String.format(java.util.Locale.ROOT, "%.1f MiB/s",
                bytes / (latencyNanos / 1e9) / (1 << 20)));
    }

    /** Issue 37 item 7: the warm, batched restore throughput per arm (local, shm, tcp, raw) and its case. */
    synchronized void warmThroughput(String batchCase, Map<String, String> byArm) {
        warmThroughput = byArm + " (" + batchCase + ")";
    }

    synchronized void coverage(String state) {
        coverage.merge(state, 1L, Long::sum);
    }

    synchronized void awaitOutcome(String outcome) {
        awaits.merge(outcome, 1L, Long::sum);
    }

    synchronized void remoteCandidate() {
        remoteCandidates++;
    }

    synchronized void evicted(long n) {
        evicted += n;
    }

    synchronized void exclusionMs(long ms) {
        exclusionMs = ms;
    }

    synchronized void restart(String before, String after) {
        restart = before + " -> " + after;
    }

    synchronized void evictionVisibility(String outcome) {
        evictionVisibility = outcome;
    }

    synchronized void rebootstrap(String outcome) {
        rebootstrap = outcome;
    }

    /** PERF-1/PERF-2 figures in nanoseconds, printed in ms. */
    synchronized void visibility(int bursts, int blocksPerBurst, long p50Ns, long p99Ns, long maxNs) {
        visibility = String.format(java.util.Locale.ROOT, "%.3f / %.3f ms (max %.3f ms; %d bursts of %d blocks, "
                + "ordinary publication, no sync/await in the measured path)", p50Ns / 1e6, p99Ns / 1e6, maxNs / 1e6,
                bursts, blocksPerBurst);
    }

    synchronized void sigtermExit(int code) {
        sigtermExits.merge(code, 1L, Long::sum);
    }

    synchronized void error(String message) {
        errors++;
        if (errorMessages.size() < ERROR_MESSAGES_MAX) {
            errorMessages.add(message);
        }
    }

    synchronized long errors() {
        return errors;
    }

    synchronized void print(PrintStream out) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"blocks saved / bytes", blocksSaved + " / " + bytesSaved});
        rows.add(new String[] {"blocks restored and verified / bytes", blocksRestored + " / " + bytesRestored});
        StringBuilder routes = new StringBuilder();
        peerRoutes.forEach((r, c) -> routes.append(routes.isEmpty() ? "" : ", ").append(r).append(' ').append(c[0])
                .append(" / ").append(c[1]));
        rows.add(new String[] {"peer restores verified, blocks / bytes per route", routes.isEmpty() ? "-" : routes.toString()});
        rows.add(new String[] {"restore throughput, warm and batched", warmThroughput});
        rows.add(new String[] {"peer READ throughput (cold: the first READs, bytes / summed READ latency)",
                readThroughput.isEmpty() ? "-" : readThroughput.toString()});
        rows.add(new String[] {"coverage states observed (cross-node queries)", coverage.toString()});
        rows.add(new String[] {"remote candidates seen", Long.toString(remoteCandidates)});
        rows.add(new String[] {"await outcomes (peer fences)", awaits.toString()});
        rows.add(new String[] {"publication-to-visibility p50 / p99", visibility});
        rows.add(new String[] {"residences evicted", Long.toString(evicted)});
        rows.add(new String[] {"eviction visible on a peer", evictionVisibility});
        rows.add(new String[] {"kill -9 -> excluded by a peer", exclusionMs < 0 ? "-" : exclusionMs + " ms"});
        rows.add(new String[] {"restart (new incarnation)", restart});
        rows.add(new String[] {"re-bootstrap of the new incarnation", rebootstrap});
        rows.add(new String[] {"SIGTERM exit codes", sigtermExits.toString()});
        rows.add(new String[] {"errors", Long.toString(errors)});
        int w = rows.stream().mapToInt(r -> r[0].length()).max().orElse(10);
        out.println();
        out.println("| " + pad("metric", w) + " | value |");
        out.println("|" + "-".repeat(w + 2) + "|-------|");
        for (String[] r : rows) {
            out.println("| " + pad(r[0], w) + " | " + r[1] + " |");
        }
        for (String e : errorMessages) {
            out.println("error: " + e);
        }
        out.flush();
    }

    private static String pad(String s, int w) {
        return s + " ".repeat(w - s.length());
    }
}
