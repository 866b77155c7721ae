// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module jetcd.grpc {
    requires io.grpc.protobuf;
    requires vertx.grpc;

    requires transitive com.google.common;
    requires transitive com.google.protobuf;
    requires transitive io.grpc;
    requires transitive io.grpc.stub;
    requires transitive io.vertx.core;

    exports io.etcd.jetcd.api;
    exports io.etcd.jetcd.api.lock;

}
