// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.grpc.netty {
    requires com.google.errorprone.annotations;
    requires io.netty.buffer;
    requires io.netty.codec;
    requires io.netty.codec.http;
    requires io.netty.common;
    requires io.netty.handler.proxy;
    requires io.netty.transport.unix.common;
    requires java.logging;

    requires transitive com.google.common;
    requires transitive io.grpc;
    requires transitive io.grpc.internal;
    requires transitive io.netty.codec.http2;
    requires transitive io.netty.handler;
    requires transitive io.netty.transport;
    requires transitive io.perfmark;

    exports io.grpc.netty;

    provides io.grpc.ManagedChannelProvider with
        io.grpc.netty.NettyChannelProvider,
        io.grpc.netty.UdsNettyChannelProvider;
    provides io.grpc.NameResolverProvider with
        io.grpc.netty.UdsNameResolverProvider;
    provides io.grpc.ServerProvider with
        io.grpc.netty.NettyServerProvider;

}
