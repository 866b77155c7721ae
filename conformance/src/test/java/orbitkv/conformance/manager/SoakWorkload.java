package orbitkv.conformance.manager;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One step of the soak's churn (issue 37 item 6), driven by one thread: a batch of {@link #BLOCKS} blocks of
 * {@link #BLOCK_BYTES} saved on a member, restored locally from it, then restored by the next member from it as a
 * peer (sync and await first, API-5) over TCP and shared memory in turn; batches beyond the newest {@code liveBatches}
 * are evicted explicitly on their source (and the members' small DRAM evicts by LRU too). Every restored byte is
 * compared with what was saved: a block with other bytes, or a key not asked for, is a mismatch. A restore that
 * stops early (a member restarting or fenced) is a miss, counted, never a mismatch.
 */
final class SoakWorkload {
    static final String NS = "soak";
    static final int BLOCKS = 8;
    static final int BLOCK_BYTES = 64 << 10;
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);

    private record Batch(SoakSampler.Life source, Map<String, byte[]> blocks) {}

    private final ArrayDeque<Batch> live = new ArrayDeque<>();
    private final int liveBatches;
    private long batch;
    long saves;
    long saveFailures;
    long localRestores;
    long peerRestoresTcp;
    long peerRestoresShm;
    long restoreFailures;
    long incomplete;
    long blocksVerified;
    long bytesVerified;
    long mismatches;
    long evictions;
    long awaitFailures;
    final List<String> mismatchNotes = new ArrayList<>();

    SoakWorkload(int liveBatches) {
        this.liveBatches = liveBatches;
    }

    /** One batch saved on {@code source} and restored by {@code source} and by {@code requester}. */
    void step(SoakSampler.Life source, SoakSampler.Life requester) {
        long g = ++batch;
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        for (int i = 0; i < BLOCKS; i++) {
            blocks.put(String.format("%064x", g * 1_000 + i), ManagerApi.payload(g, i, BLOCK_BYTES - 64 + i));
        }
        ManagerApi src = api(source);
        try {
            ManagerApi.Reply r = src.save(NS, blocks);
            if (r.status() != 200) {
                saveFailures++;
                return;
            }
        } catch (RuntimeException | AssertionError e) {
            saveFailures++;
            return;
        }
        saves++;
        live.addLast(new Batch(source, blocks));
        restore(src, blocks, null, "local");
        localRestores++;
        if (requester != null) {
            try {
                ManagerCluster.published(requester.process(), 10_000, source.process());
            } catch (RuntimeException | AssertionError e) {
                awaitFailures++;
            }
            boolean tcp = g % 2 == 0;
            restore(api(requester), blocks, tcp ? "tcp" : "shared-memory-preferred", requester.name() + "<-" + source.name());
            if (tcp) {
                peerRestoresTcp++;
            } else {
                peerRestoresShm++;
            }
        }
        while (live.size() > liveBatches) {
            evict(live.removeFirst());
        }
    }

    private void restore(ManagerApi api, Map<String, byte[]> expected, String backend, String what) {
        List<String> keys = List.copyOf(expected.keySet());
        ManagerApi.Reply r;
        try {
            r = backend == null ? api.restore(NS, keys) : api.restore(NS, keys, backend, 10_000);
        } catch (RuntimeException | AssertionError e) {
            restoreFailures++;
            return;
        }
        if (r.status() != 200) {
            restoreFailures++;
            return;
        }
        Map<String, byte[]> back = ManagerApi.unframe(r.body());
        for (Map.Entry<String, byte[]> e : back.entrySet()) {
            byte[] want = expected.get(e.getKey());
            if (want == null || !Arrays.equals(want, e.getValue())) {
                mismatches++;
                if (mismatchNotes.size() < 16) {
                    mismatchNotes.add(what + " " + backend + " key " + e.getKey() + (want == null ? " not asked for" : " other bytes"));
                }
            } else {
                blocksVerified++;
                bytesVerified += want.length;
            }
        }
        if (back.size() < expected.size()) {
            incomplete++;
        }
    }

    private void evict(Batch b) {
        try {
            if (api(b.source()).evict(NS, List.copyOf(b.blocks().keySet()), "ALL").status() == 200) {
                evictions++;
            }
        } catch (RuntimeException | AssertionError e) {
            // the source's life ended (killed, restarted): its blocks went with it
        }
    }

    private static ManagerApi api(SoakSampler.Life l) {
        return new ManagerApi(l.process().httpBase(), CALL_TIMEOUT);
    }

    String summary() {
        return String.format(Locale.ROOT, "batches %d: saves %d (%d failed), restores local %d, peer tcp %d, peer shm %d"
                        + " (%d failed, %d incomplete), publication awaits failed %d, explicit evictions %d; verified %d blocks,"
                        + " %d bytes; mismatches %d", batch, saves, saveFailures, localRestores, peerRestoresTcp,
                peerRestoresShm, restoreFailures, incomplete, awaitFailures, evictions, blocksVerified, bytesVerified, mismatches);
    }
}
