package orbitkv.index.view;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;

/** The services every owner view shares: scope, budget, namespace ids, coverage, clock, histograms. */
record IndexContext(Scope scope, ScopeDigest scopeDigest, IndexConfig config, IndexBudget budget,
        NamespaceTable namespaces, CoverageTracker coverage, LongSupplier monoNanos, LockHoldHistogram applyHold,
        LockHoldHistogram lookupHold, AtomicLong viewsWithdrawn) {
}
