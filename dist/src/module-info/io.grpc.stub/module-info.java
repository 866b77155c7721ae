// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.grpc.stub {
    requires com.google.errorprone.annotations;
    requires java.logging;

    requires transitive com.google.common;
    requires transitive io.grpc;

    exports io.grpc.stub;
    exports io.grpc.stub.annotations;

}
