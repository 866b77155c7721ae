package orbitkv.index.view;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.index.OwnerState;

/**
 * Maintains the discovery state incrementally (IDX-8): a count of admitted owners without a current
 * installed view and the earliest instant at which some installed owner's receipt age passes the
 * freshness budget. Owner and membership changes update it; a lookup reads one immutable
 * {@link State} and compares one timestamp, never building a per-member vector.
 */
final class CoverageTracker {
    /**
     * The published state.
     *
     * @param membershipValid false when membership is suspended, expired or fenced
     * @param notInstalled admitted owners whose state is not INSTALLED
     * @param freshUntilNanos the clock value after which some installed owner is stale
     * @param viewGeneration increases with every published change
     */
    record State(boolean membershipValid, int notInstalled, long freshUntilNanos, long viewGeneration) {
    }

    private final long freshnessBudgetNanos;
    private final Set<OwnerView> admitted = new HashSet<>();
    private int notInstalled;
    private boolean membershipValid;
    private OwnerView stalest;
    /**
     * The view generation counter, shared by every scope generation of one index lineage (IDX-6): a query answered
     * after a scope swap never carries a smaller view generation than one answered before it.
     */
    private final AtomicLong generation;
    private volatile State current = new State(false, 0, Long.MAX_VALUE, 0);

    CoverageTracker(long freshnessBudgetNanos) {
        this(freshnessBudgetNanos, new AtomicLong());
    }

    CoverageTracker(long freshnessBudgetNanos, AtomicLong generation) {
        this.freshnessBudgetNanos = freshnessBudgetNanos;
        this.generation = generation;
    }

    /** The shared view generation counter (for the next scope generation, IDX-6). */
    AtomicLong generationCounter() {
        return generation;
    }

    State current() {
        return current;
    }

    synchronized void membership(boolean valid) {
        membershipValid = valid;
        publish();
    }

    synchronized void admit(OwnerView owner) {
        if (admitted.add(owner) && owner.state() != OwnerState.INSTALLED) {
            notInstalled++;
        }
        recomputeFreshness();
        publish();
    }

    synchronized void exclude(OwnerView owner, OwnerState stateBefore) {
        if (admitted.remove(owner) && stateBefore != OwnerState.INSTALLED) {
            notInstalled--;
        }
        recomputeFreshness();
        publish();
    }

    synchronized void stateChanged(OwnerView owner, OwnerState from, OwnerState to) {
        if (!admitted.contains(owner)) {
            return;
        }
        if (from == OwnerState.INSTALLED) {
            notInstalled++;
        }
        if (to == OwnerState.INSTALLED) {
            notInstalled--;
        }
        recomputeFreshness();
        publish();
    }

    /** A frame or liveness arrived from {@code owner}; receipts only move forward. */
    synchronized void receipt(OwnerView owner) {
        if (owner == stalest) {
            recomputeFreshness();
            publish();
        }
    }

    /** The visible rows changed (an applied frame): a new view generation. */
    synchronized void viewChanged() {
        publish();
    }

    synchronized long viewGeneration() {
        return current.viewGeneration();
    }

    private void recomputeFreshness() {
        stalest = null;
        long oldest = Long.MAX_VALUE;
        for (OwnerView o : admitted) {
            if (o.state() == OwnerState.INSTALLED && (stalest == null || o.lastReceiptNanos() < oldest)) {
                oldest = o.lastReceiptNanos();
                stalest = o;
            }
        }
    }

    private void publish() {
        long freshUntil = stalest == null ? Long.MAX_VALUE : saturatedAdd(stalest.lastReceiptNanos(), freshnessBudgetNanos);
        current = new State(membershipValid, notInstalled, freshUntil, generation.incrementAndGet());
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
