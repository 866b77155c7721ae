// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.grpc.protobuf.lite {
    requires com.google.common;

    requires transitive com.google.protobuf;
    requires transitive io.grpc;

    exports io.grpc.protobuf.lite;

}
