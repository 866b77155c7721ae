package orbitkv.index;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import orbitkv.membership.ProtocolClock;
import orbitkv.index.view.ScopedGlobalIndex;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;

/**
 * The requester's scoped local index of remote residences (DESIGN §6). It receives owner views through
 * the {@link ViewReceiver} SPI, takes its source list from membership only (IDX-2), and answers lookups
 * with positive evidence, one {@link Coverage} state and a view generation (IDX-7, IDX-8).
 *
 * <p>Thread-safe. Readers never observe a partially applied frame (DELTA-2); frames are validated before
 * any index lock is taken and no lock is held across I/O (DELTA-4).
 */
public interface GlobalIndex extends ViewReceiver {
    /**
     * A new index.
     *
     * @param self the requester's own incarnation (never a remote owner; its tiers answer locally)
     * @param scope the requester's subscription scope (IDX-4)
     * @param config validated settings
     * @param monoNanos a monotonic nanosecond clock (tests inject one; production passes its {@code ProtocolClock})
     * @param cleanupExecutor runs bounded cleanup batches of removed owners (IDX-1)
     */
    static GlobalIndex create(Incarnation self, Scope scope, IndexConfig config, LongSupplier monoNanos,
            Executor cleanupExecutor) {
        return new ScopedGlobalIndex(self, scope, config, monoNanos, cleanupExecutor);
    }

    /**
     * A new index whose freshness checks, receipt stamps and lock-hold timings read {@code clock} (issue 25: the
     * Manager's one production clock, or virtual time in a test or a simulator). The index arms no timer.
     */
    static GlobalIndex create(Incarnation self, Scope scope, IndexConfig config, ProtocolClock clock,
            Executor cleanupExecutor) {
        return create(self, scope, config, java.util.Objects.requireNonNull(clock, "clock")::nanoTime, cleanupExecutor);
    }

    /**
     * IDX-6: a new scope generation of {@code current}'s requester for {@code scope}, built beside it: it shares
     * {@code current}'s one byte budget (rows of both are charged together), clock, cleanup executor and view
     * generation counter, and starts with no owner view. The caller feeds it membership and sessions, swaps it in
     * when it is complete and {@linkplain #retire() retires} the generation it replaces (or retires it if abandoned).
     *
     * @throws IllegalArgumentException if {@code current} was not made by {@link #create}
     */
    static GlobalIndex nextGeneration(GlobalIndex current, Scope scope) {
        return ScopedGlobalIndex.nextGeneration(current, scope);
    }

    /** The subscription scope this index generation was built for (IDX-4, IDX-6). */
    Scope scope();

    /**
     * IDX-6: this scope generation no longer serves: every owner is excluded at once, its rows are freed back to the
     * shared budget in bounded asynchronous batches (IDX-1), later membership views admit nobody and lookups answer
     * Unavailable. Idempotent.
     */
    void retire();

    /** Applies a new membership view: adds owners, excludes removed incarnations at once (IDX-13). */
    void onMembership(MembershipView view);

    /** Candidates for at most {@code lookupKeysMax} keys / {@code lookupBytesMax} bytes (IDX-9). */
    LookupOutcome lookup(List<StateKey> keys);

    /** The current coverage for in-scope keys, O(1) (IDX-8). */
    Coverage coverage();

    /** Index-wide diagnostics. */
    IndexStatus status();

    /**
     * One page of per-owner diagnostics (IDX-8, DIAG-1).
     *
     * @param limit 1..{@code diagnosticsPageSizeMax}
     * @param pageToken empty for the first page, else a token from the previous page
     * @throws IllegalArgumentException naming the field and bound for a bad limit or token
     */
    StatusPage ownerStatus(int limit, Optional<String> pageToken);

    /** Hold times of the per-owner apply (write) lock (IDX-1, DIAG-3). */
    LockHoldSnapshot applyLockHold();

    /** Hold times of the per-owner lookup (read) lock (IDX-1, DIAG-3). */
    LockHoldSnapshot lookupLockHold();
}
