// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module jetcd.common {
    requires transitive io.grpc;

    exports io.etcd.jetcd.common;
    exports io.etcd.jetcd.common.exception;

}
