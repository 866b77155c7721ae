/**
 * Source inventory and the InventorySession v4 (DESIGN §4-§5): resident map, bounded journal,
 * coalescer, interval partitioning, snapshot pager, both ends of the session, credit ledger, fences.
 *
 * <p>Exports the contract ({@code orbitkv.inventory}) and the generated wire contract
 * ({@code orbitkv.inventory.wire}). Because generated messages and service stubs appear in exported
 * signatures, protobuf, grpc-api, grpc-stub, grpc-protobuf and Guava ({@code ListenableFuture} in the
 * future stub) are {@code requires transitive}; so is membership ({@code Incarnation} in
 * {@code InventoryFence}); so is the Prometheus core (the intentional-wait histogram). Implementation
 * packages {@code orbitkv.inventory.source} and {@code orbitkv.inventory.codec} are not exported. Payload bytes are never owned here (DESIGN §2).
 */
module orbitkv.inventory {
    exports orbitkv.inventory;
    exports orbitkv.inventory.wire;

    requires transitive orbitkv.membership;
    requires transitive com.google.protobuf;
    requires transitive io.grpc;
    requires transitive io.grpc.stub;
    requires transitive io.grpc.protobuf;
    requires transitive com.google.common;
    requires org.slf4j;
    // InventorySource#intentionalWaitSeconds hands the histogram to whoever owns the metrics registry.
    requires transitive io.prometheus.metrics.core;
}
