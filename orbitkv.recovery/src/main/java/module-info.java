/**
 * Recovery route selection (DESIGN §8): demand compilation, eligible routes, the fixed policy, cost
 * model and observations, bounded search, replanning, admission credits, route traces.
 *
 * <p>Exports only {@code orbitkv.recovery}; index, transfer and membership types appear in its
 * signatures.
 */
module orbitkv.recovery {
    exports orbitkv.recovery;

    requires transitive orbitkv.index;
    requires transitive orbitkv.transfer;
    requires transitive orbitkv.membership;
}
