// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.grpc.protobuf {
    requires com.google.common;
    requires io.grpc.protobuf.lite;

    requires transitive com.google.errorprone.annotations;
    requires transitive com.google.protobuf;
    requires transitive io.grpc;
    requires transitive proto.google.common.protos;

    exports io.grpc.protobuf;

}
