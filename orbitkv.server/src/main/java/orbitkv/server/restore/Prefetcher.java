package orbitkv.server.restore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.index.Replica;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.server.admission.NodeAdmissionService;
import orbitkv.server.tier.ByteBudget;
import orbitkv.server.tier.LocalTiers;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.Destination;
import orbitkv.transfer.Grant;
import orbitkv.transfer.GrantRequest;
import orbitkv.transfer.Intent;
import orbitkv.transfer.ReadHandle;
import orbitkv.transfer.ReadResult;

/**
 * Declared-demand prefetch (ROUTE-13, seed S7): bounded speculative work before any predictive replication.
 *
 * <ul>
 *   <li>A declared key that is already local, or has no fresh replica on another owner, is not queued; the others wait
 *       in one queue per source, at most {@code --prefetch-keys-queued-max} keys queued or in flight (beyond:
 *       {@code queue-full}, counted).</li>
 *   <li><b>One job per peer</b>: at most one job runs per source at a time; a job takes up to {@value #JOB_KEYS_MAX}
 *       consecutive keys of its queue, Authorizes them with {@link Intent#PREFETCH} (the source caps the pinned bytes
 *       of prefetch grants on its own, docs/transfer.md) and READs the granted blocks one at a time.</li>
 *   <li><b>At most 5 % of the qualified network budget</b>: the qualified budget is this Manager's receive window
 *       ({@code --transfer-receive-in-flight-bytes-max}, which every peer READ takes before its Authorize); all jobs
 *       together hold at most {@value #BUDGET_PERCENT} % of it, and each job also takes its bytes from the window
 *       itself, so demand and speculation share one bound. A block larger than the 5 % is refused
 *       ({@code block-exceeds-budget}).</li>
 *   <li><b>Stopped by demand</b>: while any restore runs, no job starts and a running job takes no next batch
 *       ({@code paused}); what it submitted drains (READs end, the grant is released). Queued keys wait and are dropped
 *       at their deadline ({@code expired}).</li>
 * </ul>
 *
 * A key the retention estimate would not keep now is dropped before it is fetched ({@code not-kept}: no network spent
 * on a copy that would be thrown away). A READ block is verified by the engine (CRC32C, INV-2) and then kept through
 * {@link Retention} (its reservation and reuse-benefit estimate); a kept block is tracked by the {@link PrefetchLedger}
 * until used or wasted.
 */
public final class Prefetcher implements AutoCloseable {
    /** The share of the qualified network budget speculative work may hold at once (seed S7). */
    public static final int BUDGET_PERCENT = 5;
    /** Keys of one job's Authorize (one grant). */
    static final int JOB_KEYS_MAX = 16;
    /** Bound on waiting for an Authorize or READ answer beyond its own timeout (the engine answers by then). */
    private static final long ANSWER_SLACK_MS = 5_000;

    /** What happened to one declared key when the declaration arrived (a closed set: metric labels). */
    public enum KeyOutcome {
        ACCEPTED, LOCAL, NO_REPLICA, DUPLICATE, QUEUE_FULL, STANDALONE;

        public String traceName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Why an accepted key was not prefetched (a closed set: metric labels). */
    public enum Refusal {
        EXPIRED, BLOCK_EXCEEDS_BUDGET, RECEIVE_CREDITS, SOURCE_GONE, AUTHORIZE_REFUSED, READ_FAILED, NOT_KEPT, CLOSED;

        public String traceName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private record Item(StateKey key, Replica replica, long deadlineNanos) {}

    private final LocalTiers tiers;
    private final Retention retention;
    private final PrefetchLedger ledger;
    private final int keysQueuedMax;
    private final ByteBufAllocator alloc;
    private final ExecutorService jobs = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("orbitkv-prefetch-", 0).factory());
    private final Map<KeyOutcome, LongAdder> keyOutcomes = new EnumMap<>(KeyOutcome.class);
    private final Map<Refusal, LongAdder> refusals = new EnumMap<>(Refusal.class);
    private final LongAdder paused = new LongAdder();
    private final LongAdder jobsStarted = new LongAdder();
    // guarded by this
    private final Map<Incarnation, ArrayDeque<Item>> queues = new LinkedHashMap<>();
    private final Set<StateKey> pending = new HashSet<>();
    private final Set<Incarnation> running = new HashSet<>();
    private int demand;
    private boolean closed;
    private RestoreTransfer transfer;
    private ByteBudget budget;

    Prefetcher(LocalTiers tiers, Retention retention, PrefetchLedger ledger, int keysQueuedMax, ByteBufAllocator alloc) {
        this.tiers = tiers;
        this.retention = retention;
        this.ledger = ledger;
        this.keysQueuedMax = keysQueuedMax;
        this.alloc = alloc;
        for (KeyOutcome o : KeyOutcome.values()) {
            keyOutcomes.put(o, new LongAdder());
        }
        for (Refusal r : Refusal.values()) {
            refusals.put(r, new LongAdder());
        }
    }

    /** Queues the keys of {@code req} that need a peer fetch; returns what happened to each declared key. */
    Map<KeyOutcome, Integer> submit(PrefetchRequest req, RestoreView view) {
        Map<KeyOutcome, Integer> out = new EnumMap<>(KeyOutcome.class);
        Optional<RestoreTransfer> t = view.transfer();
        if (t.isEmpty()) {
            out.put(KeyOutcome.STANDALONE, req.keys().size());
            count(out);
            return out;
        }
        IndexEvidence evidence = view.evidence(req.namespace(), req.keys());
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(req.deadlineMs());
        List<Item> items = new ArrayList<>(req.keys().size());
        for (int i = 0; i < req.keys().size(); i++) {
            StateKey key = req.keys().get(i);
            Replica source = tiers.residences(key).isEmpty() ? source(evidence.replicas().get(i), t.get().self()) : null;
            if (source != null) {
                items.add(new Item(key, source, deadline));
            } else {
                out.merge(tiers.residences(key).isEmpty() ? KeyOutcome.NO_REPLICA : KeyOutcome.LOCAL, 1, Integer::sum);
            }
        }
        synchronized (this) {
            transfer = t.get();
            if (budget == null) {
                budget = new ByteBudget("prefetch", Math.max(1,
                        t.get().receiveCredits().bytesMax() / 100 * BUDGET_PERCENT));
            }
            for (Item it : items) {
                KeyOutcome o = pending.contains(it.key()) ? KeyOutcome.DUPLICATE
                        : closed || pending.size() >= keysQueuedMax ? KeyOutcome.QUEUE_FULL : KeyOutcome.ACCEPTED;
                if (o == KeyOutcome.ACCEPTED) {
                    pending.add(it.key());
                    queues.computeIfAbsent(it.replica().owner(), p -> new ArrayDeque<>()).addLast(it);
                }
                out.merge(o, 1, Integer::sum);
            }
            schedule();
        }
        count(out);
        return out;
    }

    private void count(Map<KeyOutcome, Integer> out) {
        out.forEach((o, n) -> keyOutcomes.get(o).add(n));
    }

    /** The source of a prefetch: a fresh replica on another owner, DRAM before SSD, then the lower owner. */
    static Replica source(List<Replica> replicas, Incarnation self) {
        return replicas.stream().filter(r -> !r.stale() && !r.owner().equals(self))
                .min(Comparator.comparing(Replica::medium).thenComparing(r -> String.valueOf(r.owner())))
                .orElse(null);
    }

    /** A restore began: no job starts and no job takes a next batch until every restore ended. */
    synchronized void demandBegins() {
        demand++;
    }

    /** A restore ended; the last one lets queued prefetch go on. */
    synchronized void demandEnds() {
        demand--;
        schedule();
    }

    /** Starts a job for every peer with queued keys and none running, unless demand runs. Holds the lock. */
    private void schedule() {
        if (closed || demand > 0) {
            return;
        }
        for (Map.Entry<Incarnation, ArrayDeque<Item>> e : queues.entrySet()) {
            Incarnation peer = e.getKey();
            if (!e.getValue().isEmpty() && running.add(peer)) {
                jobsStarted.increment();
                jobs.execute(() -> runJob(peer));
            }
        }
    }

    private void runJob(Incarnation peer) {
        try {
            while (true) {
                List<Item> batch = new ArrayList<>(JOB_KEYS_MAX);
                long bytes = nextBatch(peer, batch);
                if (bytes < 0) {
                    return;
                }
                runBatch(peer, batch, bytes);
            }
        } catch (RuntimeException | Error e) {
            synchronized (this) {
                running.remove(peer);
            }
            throw e;
        }
    }

    /**
     * Takes the next batch of {@code peer}'s queue into {@code batch} with its bytes from the speculation budget;
     * -1 when the job ends (demand runs, the queue is empty, or the budget is held by other jobs, which schedule this
     * peer again when they give it back). Expired and oversized keys are dropped here.
     */
    private synchronized long nextBatch(Incarnation peer, List<Item> batch) {
        ArrayDeque<Item> q = queues.get(peer);
        if (closed || demand > 0 || q == null || q.isEmpty()) {
            if (demand > 0 && q != null && !q.isEmpty()) {
                paused.increment();
            }
            if (q != null && q.isEmpty()) {
                queues.remove(peer);
            }
            running.remove(peer);
            return -1;
        }
        long now = System.nanoTime();
        long bytes = 0;
        while (!q.isEmpty() && batch.size() < JOB_KEYS_MAX) {
            Item it = q.peekFirst();
            long size = it.replica().sizeBytes();
            Refusal drop = it.deadlineNanos() - now <= 0 ? Refusal.EXPIRED
                    : size > budget.bytesMax() ? Refusal.BLOCK_EXCEEDS_BUDGET
                    : !retention.wouldKeep(bytes + size) ? Refusal.NOT_KEPT : null; // never fetched to be dropped
            if (drop != null) {
                q.pollFirst();
                pending.remove(it.key());
                refusals.get(drop).increment();
                continue;
            }
            if (bytes + size > budget.bytesMax()) {
                break;
            }
            batch.add(q.pollFirst());
            bytes += size;
        }
        if (batch.isEmpty() || !budget.tryTake(bytes)) {
            for (int i = batch.size() - 1; i >= 0; i--) {
                q.addFirst(batch.get(i));
            }
            batch.clear();
            running.remove(peer);
            if (q.isEmpty()) {
                queues.remove(peer);
            }
            return -1;
        }
        return bytes;
    }

    private void runBatch(Incarnation peer, List<Item> batch, long bytes) {
        RestoreTransfer t;
        synchronized (this) {
            t = transfer;
        }
        try {
            if (bytes > 0 && !t.receiveCredits().tryTake(bytes)) {
                refuse(batch.size(), Refusal.RECEIVE_CREDITS);
                return;
            }
            // issue 39: speculation never waits in the node window: its bytes are charged at once or it is refused
            NodeAdmissionService.ManagerCharge node = bytes > 0
                    ? t.admission().map(a -> a.chargeManagerRead(bytes)).orElse(null) : null;
            if (node != null && !node.granted()) {
                t.receiveCredits().release(bytes);
                refuse(batch.size(), Refusal.RECEIVE_CREDITS);
                return;
            }
            try {
                fetch(t, peer, batch);
            } finally {
                if (node != null) {
                    t.admission().orElseThrow().returnManagerRead(node, bytes); // every READ of the batch ended
                }
                if (bytes > 0) {
                    t.receiveCredits().release(bytes);
                }
            }
        } finally {
            synchronized (this) {
                budget.release(bytes);
                batch.forEach(i -> pending.remove(i.key()));
                schedule();
            }
        }
    }

    private void refuse(int n, Refusal r) {
        refusals.get(r).add(n);
    }

    /** One Authorize (INTENT_PREFETCH) of the batch at its listed generations, then the granted blocks READ and kept. */
    private void fetch(RestoreTransfer t, Incarnation peer, List<Item> batch) {
        Optional<Member> member = t.member(peer);
        long remainingMs = TimeUnit.NANOSECONDS.toMillis(batch.stream().mapToLong(Item::deadlineNanos).min()
                .orElseThrow() - System.nanoTime());
        if (member.isEmpty() || remainingMs <= 0) {
            refuse(batch.size(), member.isEmpty() ? Refusal.SOURCE_GONE : Refusal.EXPIRED);
            return;
        }
        List<BlockRef> refs = batch.stream().map(i -> new BlockRef(i.key(), i.replica().medium(),
                i.replica().sequence())).toList();
        Duration timeout = Duration.ofMillis(Math.max(1, Math.min(t.authorizeTimeoutMs(), remainingMs)));
        AuthorizeOutcome outcome;
        try {
            outcome = t.engine().authorize(new GrantRequest(member.get(), Intent.PREFETCH, refs, timeout))
                    .toCompletableFuture().get(timeout.toMillis() + ANSWER_SLACK_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            refuse(batch.size(), Refusal.CLOSED);
            return;
        } catch (Exception e) {
            refuse(batch.size(), Refusal.AUTHORIZE_REFUSED);
            return;
        }
        if (!(outcome instanceof AuthorizeOutcome.Granted g)) {
            refuse(batch.size(), Refusal.AUTHORIZE_REFUSED);
            return;
        }
        try {
            List<BlockResult> blocks = g.grant().blocks();
            for (int b = 0; b < blocks.size(); b++) {
                if (Thread.currentThread().isInterrupted()) {
                    refuse(1, Refusal.CLOSED);
                } else if (blocks.get(b) instanceof BlockResult.Granted granted) {
                    readAndKeep(t, g.grant(), b, batch.get(b).key(), granted.lengthBytes(),
                            Duration.ofMillis(Math.max(1, remainingMs)));
                } else {
                    refuse(1, Refusal.AUTHORIZE_REFUSED);
                }
            }
        } finally {
            t.engine().release(g.grant()); // sent once every READ of the grant terminated
        }
    }

    /** READs block {@code b} into memory of its own, then keeps it; the memory is freed only after the READ ended. */
    private void readAndKeep(RestoreTransfer t, Grant grant, int b, StateKey key, long length, Duration timeout) {
        ByteBuf buf = alloc.directBuffer((int) length, (int) length);
        boolean ended = false;
        try {
            ByteBuffer dst = buf.nioBuffer(0, (int) length);
            ReadHandle h = t.engine().read(grant, b, Destination.of(dst), t.defaultBackend(), timeout);
            ReadResult r = await(h, timeout);
            ended = r != null;
            if (!(r instanceof ReadResult.Completed)) {
                refuse(1, r == null ? Refusal.CLOSED : Refusal.READ_FAILED);
                return;
            }
            if (retention.keep(key, dst, Retention.Cause.PREFETCH) == null) {
                ledger.prefetched(key, length);
            } else {
                refuse(1, Refusal.NOT_KEPT);
            }
        } catch (RuntimeException e) {
            ended = true; // the engine refused the READ by contract violation and never started it
            refuse(1, Refusal.READ_FAILED);
        } finally {
            if (ended) {
                buf.release(); // never while a READ may still write into it (INV-8)
            }
        }
    }

    /**
     * The READ's outcome; cancelled when interrupted (shutdown) or overdue and then awaited (its memory is freed only
     * after it physically ended, INV-8); null when it never ended (the memory is then left to the collector).
     */
    private static ReadResult await(ReadHandle h, Duration timeout) {
        boolean interrupted = false;
        try {
            return h.outcome().toCompletableFuture().get(timeout.toMillis() + ANSWER_SLACK_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
        } catch (Exception e) {
            // timed out beyond the READ's own timeout, or the engine failed: cancel and await its end below
        }
        h.cancel();
        try {
            return h.outcome().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
            return null;
        } catch (Exception e) {
            return null;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A point-in-time copy: key outcomes, refusals, paused batches, jobs started, queued keys, jobs running, budget. */
    synchronized Figures figures() {
        Map<KeyOutcome, Long> keys = new EnumMap<>(KeyOutcome.class);
        keyOutcomes.forEach((o, n) -> keys.put(o, n.sum()));
        Map<Refusal, Long> refused = new EnumMap<>(Refusal.class);
        refusals.forEach((r, n) -> refused.put(r, n.sum()));
        return new Figures(keys, refused, paused.sum(), jobsStarted.sum(), pending.size(), running.size(),
                budget == null ? 0 : budget.heldBytes(), budget == null ? 0 : budget.bytesMax());
    }

    /** The prefetcher's counters and gauges. */
    public record Figures(Map<KeyOutcome, Long> keys, Map<Refusal, Long> refusals, long paused, long jobsStarted,
            int keysPending, int jobsRunning, long budgetHeldBytes, long budgetBytesMax) {
        public Figures {
            keys = Map.copyOf(keys);
            refusals = Map.copyOf(refusals);
        }
    }

    /** Stops: no new job; running jobs are interrupted, their READs cancelled and drained, their grants released. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        jobs.shutdownNow();
    }
}
