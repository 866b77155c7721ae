// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module jetcd.core {
    requires com.google.common;
    requires dev.failsafe.core;
    requires io.grpc.netty;
    requires io.netty.transport;
    requires java.naming;
    requires org.slf4j;
    requires vertx.grpc;

    requires transitive com.google.protobuf;
    requires transitive io.grpc;
    requires transitive io.grpc.stub;
    requires transitive io.netty.handler;
    requires transitive io.vertx.core;
    requires transitive jetcd.common;
    requires transitive jetcd.grpc;

    exports io.etcd.jetcd;
    exports io.etcd.jetcd.auth;
    exports io.etcd.jetcd.cluster;
    exports io.etcd.jetcd.election;
    exports io.etcd.jetcd.impl;
    exports io.etcd.jetcd.kv;
    exports io.etcd.jetcd.lease;
    exports io.etcd.jetcd.lock;
    exports io.etcd.jetcd.maintenance;
    exports io.etcd.jetcd.op;
    exports io.etcd.jetcd.options;
    exports io.etcd.jetcd.resolver;
    exports io.etcd.jetcd.support;
    exports io.etcd.jetcd.watch;

    provides io.grpc.NameResolverProvider with
        io.etcd.jetcd.resolver.DnsSrvResolverProvider,
        io.etcd.jetcd.resolver.HttpResolverProvider,
        io.etcd.jetcd.resolver.HttpsResolverProvider,
        io.etcd.jetcd.resolver.IPResolverProvider;

}
