package orbitkv.recovery.plan;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The planner's bounded pool of {@link PlanScratch}es: at most {@code slots} are kept; a borrow takes one out of
 * its slot (the borrower is then its only owner), a release puts it back into a free slot. When every kept
 * scratch is borrowed, the borrow makes a fresh one (counted in {@link #made}); when no slot is free at release,
 * the scratch is dropped (counted in {@link #dropped}): more concurrent decisions than slots cost allocation, never
 * a wrong answer or a wait. Lock-free and allocation-free on the steady path (a CAS scan of a few slots).
 *
 * <p>Why a pool and not a {@code ThreadLocal}: the HTTP API runs every request on its own virtual thread, so a
 * thread-local scratch would be made per request and never reused.
 */
final class ScratchPool {
    private final AtomicReferenceArray<PlanScratch> slots;
    private final Supplier<PlanScratch> factory;
    private final LongAdder made = new LongAdder();
    private final LongAdder dropped = new LongAdder();

    ScratchPool(int slots, Supplier<PlanScratch> factory) {
        if (slots < 1) {
            throw new IllegalArgumentException("scratch pool slots must be >= 1, got " + slots);
        }
        this.slots = new AtomicReferenceArray<>(slots);
        this.factory = factory;
    }

    /** A scratch owned by the caller until {@link #release}. */
    PlanScratch borrow() {
        for (int i = 0; i < slots.length(); i++) {
            if (slots.getPlain(i) != null) {
                PlanScratch s = slots.getAndSet(i, null);
                if (s != null) {
                    return s;
                }
            }
        }
        made.increment();
        return factory.get();
    }

    /** Gives {@code s} back; the caller must not touch it afterwards. */
    void release(PlanScratch s) {
        s.release();
        for (int i = 0; i < slots.length(); i++) {
            if (slots.getPlain(i) == null && slots.compareAndSet(i, null, s)) {
                return;
            }
        }
        dropped.increment();
    }

    /** Scratches made so far (the first ones, then one per borrow that found every kept scratch in use). */
    long made() {
        return made.sum();
    }

    /** Scratches dropped at release because every slot was full. */
    long dropped() {
        return dropped.sum();
    }
}
