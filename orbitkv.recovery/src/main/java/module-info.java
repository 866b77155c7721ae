/**
 * Recovery route selection (DESIGN §8): demand compilation, eligible routes, the fixed policy, cost
 * model and observations, bounded search, replanning, admission credits, route traces.
 *
 * <p>Exports only {@code orbitkv.recovery}. Today it holds {@code RouteKind}, whose signature names the
 * inventory's {@code Medium}: hence {@code requires transitive orbitkv.inventory} and nothing else. The
 * index, transfer and membership edges of DESIGN §2 arrive with the route engine that uses them.
 */
module orbitkv.recovery {
    exports orbitkv.recovery;

    requires transitive orbitkv.inventory;
}
