package orbitkv.recovery.admission;

import java.util.List;
import java.util.Map;

/**
 * The scheduling order of queued requests (DESIGN S6: eligible deadline, remaining required work, per-instance
 * fairness and aging). Deadlines already passed never reach this order: {@link AdmissionOwner#advance()} refuses them
 * first.
 */
final class Scheduling {
    private Scheduling() {}

    /**
     * The request to serve next: aged ones (waited at least {@code agingNanos}) first, oldest first; otherwise the
     * earliest deadline, then the least remaining work, then the instance with the fewest bytes charged, then arrival.
     */
    static Entries.Pending best(List<Entries.Pending> pending, long now, long agingNanos, Map<String, Long> charged) {
        Entries.Pending best = null;
        for (Entries.Pending p : pending) {
            if (best == null || before(p, best, now, agingNanos, charged)) {
                best = p;
            }
        }
        return best;
    }

    static boolean before(Entries.Pending a, Entries.Pending b, long now, long agingNanos, Map<String, Long> charged) {
        boolean agedA = now - a.arrival() >= agingNanos;
        boolean agedB = now - b.arrival() >= agingNanos;
        if (agedA != agedB) {
            return agedA;
        }
        if (agedA) {
            return a.ticket() < b.ticket();
        }
        if (a.deadline() != b.deadline()) {
            return a.deadline() - b.deadline() < 0;
        }
        if (a.remaining() != b.remaining()) {
            return a.remaining() < b.remaining();
        }
        long ca = charged.getOrDefault(a.submitter().instance, 0L);
        long cb = charged.getOrDefault(b.submitter().instance, 0L);
        if (ca != cb) {
            return ca < cb;
        }
        return a.ticket() < b.ticket();
    }
}
