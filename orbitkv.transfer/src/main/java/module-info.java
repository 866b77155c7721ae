/**
 * Transfer (DESIGN §8): source authorization (generation check, bounded pins, grants with terminal owners),
 * receive credits and egress caps, READ into requester-owned memory over two backends (TCP on Netty's native
 * transport, same-host shared memory), release after physical completion, and the versioned authorization
 * protocol {@code orbitkv.transfer.v1}.
 *
 * <p>Exports the contract ({@code orbitkv.transfer}) and the generated wire contract
 * ({@code orbitkv.transfer.wire}, so that conformance tests can forge Authorize messages). Transitive:
 * inventory ({@code StateKey}, {@code Medium} in {@code BlockRef}, {@code PayloadSource}), membership
 * ({@code Incarnation}, {@code ClusterIdentity}, {@code Member}, {@code Endpoint}, {@code MembershipView} in the
 * factories and {@code Grant}), and protobuf, grpc-api, grpc-stub and Guava (generated messages and stubs are
 * exported; {@code BindableService} and {@code io.grpc.Channel} appear in the factories). grpc-protobuf is
 * required but not transitive: it appears only in private members of the generated stubs.
 *
 * <p>Netty is not transitive: no exported signature names a Netty type. The factories take a
 * {@code TransferTransport} (io_uring or epoll) and the module builds and owns its data-plane event loops, so
 * bulk payload never runs on the Manager's gRPC or HTTP event loops.
 */
module orbitkv.transfer {
    exports orbitkv.transfer;
    exports orbitkv.transfer.wire;

    requires transitive orbitkv.inventory;
    requires transitive orbitkv.membership;
    requires transitive com.google.protobuf;
    requires transitive io.grpc;
    requires transitive io.grpc.stub;
    requires io.grpc.protobuf;
    requires transitive com.google.common;
    requires io.netty.common;
    requires io.netty.buffer;
    requires io.netty.transport;
    requires io.netty.codec;
    requires io.netty.handler;
    requires io.netty.tcnative.classes.openssl; // issue 33: netty-handler requires it only statically; OpenSSL for data TLS
    requires io.netty.transport.classes.epoll;
    requires io.netty.transport.classes.io_uring;
    requires jdk.jfr; // flight-recorder events of the data path (DataExchange, DataServe), off unless a recording asks
}
