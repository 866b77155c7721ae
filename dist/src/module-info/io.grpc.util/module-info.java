// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.grpc.util {
    requires io.grpc.internal;
    requires java.logging;

    requires transitive com.google.common;
    requires transitive io.grpc;

    exports io.grpc.util;

    provides io.grpc.LoadBalancerProvider with
        io.grpc.util.SecretRoundRobinLoadBalancerProvider.Provider,
        io.grpc.util.OutlierDetectionLoadBalancerProvider,
        io.grpc.util.RandomSubsettingLoadBalancerProvider;

}
