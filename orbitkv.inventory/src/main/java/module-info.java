/**
 * Source inventory and the InventorySession v4 (DESIGN §4-§5): resident map, bounded journal,
 * coalescer, interval partitioning, snapshot pager, both ends of the session, credit ledger, fences.
 *
 * <p>Exports the contract ({@code orbitkv.inventory}) and the generated wire contract
 * ({@code orbitkv.inventory.wire}). Because generated messages and service stubs appear in exported
 * signatures, protobuf, grpc-api, grpc-stub and Guava ({@code ListenableFuture} in the future stub) are
 * {@code requires transitive} (grpc-protobuf appears only in private members, so it is not); so is
 * membership ({@code Incarnation} in {@code InventoryFence}). Metrics leave as plain snapshot records ({@code SourceSessionMetrics},
 * {@code RequesterSessionMetrics}, {@code SecondsHistogram}) that the Manager adapts to its registry, so no
 * metrics library is required. Implementation packages {@code orbitkv.inventory.source},
 * {@code orbitkv.inventory.codec} and {@code orbitkv.inventory.session} are not exported. Payload bytes are
 * never owned here (DESIGN §2).
 */
module orbitkv.inventory {
    exports orbitkv.inventory;
    exports orbitkv.inventory.wire;

    requires transitive orbitkv.membership;
    requires transitive com.google.protobuf;
    requires transitive io.grpc;
    requires transitive io.grpc.stub;
    requires transitive com.google.common;
    requires io.grpc.protobuf; // the generated descriptor suppliers and ProtoUtils: private to the stubs and the session
    requires org.slf4j;
}
