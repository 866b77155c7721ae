// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.grpc {
    requires java.logging;

    requires transitive com.google.common;
    requires transitive com.google.errorprone.annotations;

    exports io.grpc;

    // Added by hand: grpc-api finds transports, resolvers and balancers through ServiceLoader, which
    // inside a named module needs these declarations (NOTES: JPMS traps).
    uses io.grpc.ManagedChannelProvider;
    uses io.grpc.ServerProvider;
    uses io.grpc.NameResolverProvider;
    uses io.grpc.LoadBalancerProvider;

}
