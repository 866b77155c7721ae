/**
 * The requester GlobalIndex (DESIGN §6): installed and staging owner views, delta application rules,
 * coverage states, reverse owner index, budgets, candidate limits and paginated diagnostics.
 *
 * <p>Exports only {@code orbitkv.index}. Inventory and membership types appear in its signatures
 * (StateKey, Scope, Incarnation, ViewReceiver), hence {@code requires transitive}.
 */
module orbitkv.index {
    exports orbitkv.index;

    requires transitive orbitkv.inventory;
    requires transitive orbitkv.membership;
    requires org.slf4j;
}
