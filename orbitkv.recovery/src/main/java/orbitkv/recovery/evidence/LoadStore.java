package orbitkv.recovery.evidence;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeId;
import orbitkv.recovery.LoadSummary;

/**
 * Retained load summaries (ROUTE-9): at most one per node, from its newest incarnation, stamped with local receipt
 * time, expired once the receipt age exceeds the summary's window plus the validity bound. Bounded by
 * {@code ownersMax}: a new node beyond it evicts the entry with the oldest receipt (after dropping expired ones).
 * Evidence only: nothing here authorizes anything, and nothing is published anywhere.
 */
public final class LoadStore {
    private record Entry(LoadSummary summary, long receivedNanos) {}

    private final int ownersMax;
    private final long validityNanos;
    private final Map<NodeId, Entry> entries = new HashMap<>();
    private final LongAdder accepted = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder evicted = new LongAdder();
    private final LongAdder expired = new LongAdder();

    public LoadStore(int ownersMax, long validityMs) {
        if (ownersMax < 1 || validityMs < 1) {
            throw new IllegalArgumentException("load store bounds must be >= 1");
        }
        this.ownersMax = ownersMax;
        this.validityNanos = validityMs * 1_000_000L;
    }

    public synchronized LoadSummary.Recorded record(LoadSummary s, long nowNanos) {
        NodeId node = s.owner().nodeId();
        Entry old = entries.get(node);
        LoadSummary.Recorded result = LoadSummary.Recorded.ACCEPTED;
        if (old != null && !old.summary().owner().equals(s.owner())) {
            if (old.summary().owner().epoch().compareTo(s.owner().epoch()) > 0) {
                refused.increment();
                return LoadSummary.Recorded.REFUSED_OLDER_INCARNATION;
            }
            result = LoadSummary.Recorded.REPLACED_OLDER_INCARNATION;
        } else if (old == null && entries.size() >= ownersMax) {
            sweep(nowNanos);
            if (entries.size() >= ownersMax) {
                evictOldest();
                result = LoadSummary.Recorded.ACCEPTED_EVICTED_OLDEST;
            }
        }
        entries.put(node, new Entry(s, nowNanos));
        accepted.increment();
        return result;
    }

    /** The summary of exactly {@code owner}, if retained and unexpired. */
    public synchronized Optional<LoadSummary.Aged> get(Incarnation owner, long nowNanos) {
        Entry e = entries.get(owner.nodeId());
        if (e == null) {
            return Optional.empty();
        }
        if (expired(e, nowNanos)) {
            entries.remove(owner.nodeId());
            expired.increment();
            return Optional.empty();
        }
        if (!e.summary().owner().equals(owner)) {
            return Optional.empty();
        }
        return Optional.of(new LoadSummary.Aged(e.summary(), nowNanos - e.receivedNanos()));
    }

    private boolean expired(Entry e, long nowNanos) {
        return nowNanos - e.receivedNanos() > e.summary().windowMs() * 1_000_000L + validityNanos;
    }

    private void sweep(long nowNanos) {
        for (Iterator<Entry> it = entries.values().iterator(); it.hasNext(); ) {
            if (expired(it.next(), nowNanos)) {
                it.remove();
                expired.increment();
            }
        }
    }

    private void evictOldest() {
        NodeId oldest = null;
        long at = 0;
        for (Map.Entry<NodeId, Entry> e : entries.entrySet()) {
            long r = e.getValue().receivedNanos();
            if (oldest == null || r - at < 0 || (r == at && e.getKey().compareTo(oldest) < 0)) {
                oldest = e.getKey();
                at = r;
            }
        }
        entries.remove(oldest);
        evicted.increment();
    }

    public synchronized int size() {
        return entries.size();
    }

    /** {accepted, refused, evicted, expired}. */
    public long[] counters() {
        return new long[] {accepted.sum(), refused.sum(), evicted.sum(), expired.sum()};
    }
}
