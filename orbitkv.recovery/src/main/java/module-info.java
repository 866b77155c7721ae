/**
 * Recovery route selection (DESIGN §8): demand, eligible routes, the fixed policy, the cost model fed by executed
 * routes, bounded search, execution and replanning against the Manager's transfer ports, load evidence, route
 * traces.
 *
 * <p>Exports only {@code orbitkv.recovery}. Types of the index (Replica, Coverage, LookupOutcome), the inventory
 * (Namespace, StateKey, Medium) and membership (Incarnation, NodeId) appear in its signatures, hence
 * {@code requires transitive} on exactly those three. The transfer engine is reached only through the
 * {@code TransferPorts} the Manager implements, so this module does not require {@code orbitkv.transfer}.
 * Jackson's streaming core writes the sampled trace file and SLF4J logs its one failure: neither is transitive.
 */
module orbitkv.recovery {
    exports orbitkv.recovery;

    requires transitive orbitkv.index;
    requires transitive orbitkv.inventory;
    requires transitive orbitkv.membership;
    requires com.fasterxml.jackson.core;
    requires org.slf4j;
}
