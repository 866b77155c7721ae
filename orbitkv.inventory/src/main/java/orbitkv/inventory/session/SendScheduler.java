package orbitkv.inventory.session;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The source's shared scheduling of send work (ROUTE-10, issue 39 item 5), sans-I/O: which session's pump step runs
 * next when several have work. At most {@code permits} steps run at once; a session that asks while none is free
 * waits in a bounded queue ({@code queuedMax}; beyond it the request is refused by name and counted). When a step
 * ends, the queued session of the highest effective class runs next, first come first served within a class. The
 * effective class is the session's {@link SendPriority} plus one for every {@link #AGING_PASSES} grants that passed
 * it over (aging: a bulk session is delayed, never starved). A running step yields at its next action boundary
 * when a queued session outranks it ({@link #shouldYield}).
 *
 * <p>What it never does (ROUTE-10): it decides only between sessions. A step of one session sends that session's
 * frames in the order its pump produced them, and the pump's watermark moves only with frames sent; a yield only
 * ends a step early, between two whole actions, and the next step of that session continues where it stopped.
 *
 * <p>No thread, clock or I/O; not thread-safe (the caller serializes calls: {@code SendGate} in the gRPC shell,
 * the event loop in {@code ProtocolSimulator}).
 *
 * @param <K> the identity of a session (compared with {@code equals})
 */
final class SendScheduler<K> {
    /** Grants that may pass a queued session over before its effective class rises by one. */
    static final int AGING_PASSES = 8;

    /** The answer to {@link #request}. */
    sealed interface Admission {
        /** The step may run now; {@link #release} when it ends. */
        record Granted() implements Admission {}

        /** Queued: a later {@link #release} or {@link #cancel} returns it among the granted sessions. */
        record Queued() implements Admission {}

        /** The queue holds {@code queuedMax} sessions (named refusal, counted in {@link #refusals()}); ask again later. */
        record Refused(String detail) implements Admission {}
    }

    static final Admission GRANTED = new Admission.Granted();
    static final Admission QUEUED = new Admission.Queued();

    private static final class Entry {
        SendPriority priority;
        final long ticket;
        int passes;

        Entry(SendPriority priority, long ticket) {
            this.priority = priority;
            this.ticket = ticket;
        }
    }

    private final int permits;
    private final int queuedMax;
    private final boolean priority;
    private final Map<K, SendPriority> running = new LinkedHashMap<>();
    private final Map<K, Entry> queued = new LinkedHashMap<>();
    private long tickets;
    private long refusals;
    private long grants;
    private long yields;

    /**
     * @param permits steps that may run at once (&gt;= 1)
     * @param queuedMax sessions that may wait (&gt;= 1); the source's session bound, so a correct shell is never refused
     * @param priority false: every session is {@link SendPriority#NORMAL} (first come first served, no yield)
     */
    SendScheduler(int permits, int queuedMax, boolean priority) {
        if (permits < 1 || queuedMax < 1) {
            throw new IllegalArgumentException("permits (" + permits + ") and queuedMax (" + queuedMax + ") must be >= 1");
        }
        this.permits = permits;
        this.queuedMax = queuedMax;
        this.priority = priority;
    }

    /**
     * A session has send work at {@code p}. Granted when a permit is free; else queued (a session already queued
     * only takes the new class, keeping its place); refused by name when {@code queuedMax} sessions wait.
     *
     * @throws IllegalStateException if {@code key} is running: a session asks again only after its step ended
     */
    Admission request(K key, SendPriority p) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(p, "priority");
        if (running.containsKey(key)) {
            throw new IllegalStateException("session " + key + " asked for a step while its step runs");
        }
        Entry e = queued.get(key);
        if (e != null) {
            e.priority = p;
            return QUEUED;
        }
        if (running.size() < permits && queued.isEmpty()) {
            running.put(key, p);
            grants++;
            return GRANTED;
        }
        if (queued.size() >= queuedMax) {
            refusals++;
            return new Admission.Refused("send queue holds queuedMax (" + queuedMax + ") sessions");
        }
        queued.put(key, new Entry(p, tickets++));
        return QUEUED;
    }

    /** True when a queued session outranks the running step of {@code key}: end the step at the next action boundary. */
    boolean shouldYield(K key) {
        SendPriority p = running.get(key);
        if (!priority || p == null) {
            return false;
        }
        for (Entry e : queued.values()) {
            if (rank(e) > p.ordinal()) {
                yields++;
                return true;
            }
        }
        return false;
    }

    /** The step of {@code key} ended; returns the sessions granted now, in grant order. */
    List<K> release(K key) {
        if (running.remove(key) == null) {
            throw new IllegalStateException("session " + key + " released a step it does not run");
        }
        return grantFree();
    }

    /** The session ended: out of the queue, or its running step released. Returns the sessions granted now. */
    List<K> cancel(K key) {
        if (running.remove(key) != null) {
            return grantFree();
        }
        queued.remove(key);
        return List.of();
    }

    private List<K> grantFree() {
        List<K> granted = new ArrayList<>(1);
        while (running.size() < permits && !queued.isEmpty()) {
            K next = best();
            Entry e = queued.remove(next);
            for (Entry other : queued.values()) {
                other.passes++;
            }
            running.put(next, e.priority);
            grants++;
            granted.add(next);
        }
        return granted;
    }

    private K best() {
        K best = null;
        Entry be = null;
        for (Map.Entry<K, Entry> m : queued.entrySet()) {
            Entry e = m.getValue();
            if (be == null || rank(e) > rank(be) || rank(e) == rank(be) && e.ticket < be.ticket) {
                best = m.getKey();
                be = e;
            }
        }
        return best;
    }

    /** The effective class of a queued session: its class, plus aging; every session is equal without priority. */
    private int rank(Entry e) {
        return priority ? e.priority.ordinal() + e.passes / AGING_PASSES : 0;
    }

    boolean running(K key) {
        return running.containsKey(key);
    }

    boolean isQueued(K key) {
        return queued.containsKey(key);
    }

    int runningCount() {
        return running.size();
    }

    int queuedCount() {
        return queued.size();
    }

    /** Requests refused because {@code queuedMax} sessions waited. */
    long refusals() {
        return refusals;
    }

    long grants() {
        return grants;
    }

    /** Steps told to yield to a higher class. */
    long yields() {
        return yields;
    }

    /** The sessions queued, for status and tests. */
    Set<K> queuedSessions() {
        return new HashSet<>(queued.keySet());
    }
}
