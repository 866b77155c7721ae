// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module vertx.grpc {
    requires io.netty.handler;
    requires io.netty.transport;
    requires io.vertx.core.logging;

    requires transitive io.grpc;
    requires transitive io.grpc.netty;
    requires transitive io.grpc.stub;
    requires transitive io.vertx.core;

    exports io.vertx.grpc;
    exports io.vertx.grpc.stub;

}
