// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.grpc.internal {
    requires com.google.gson;
    requires io.perfmark;
    requires java.logging;
    requires java.naming;

    requires transitive com.google.common;
    requires transitive com.google.errorprone.annotations;
    requires transitive io.grpc;

    exports io.grpc.internal;

    provides io.grpc.LoadBalancerProvider with
        io.grpc.internal.PickFirstLoadBalancerProvider;
    provides io.grpc.NameResolverProvider with
        io.grpc.internal.DnsNameResolverProvider;

}
