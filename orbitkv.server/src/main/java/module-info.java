/**
 * The Manager process (DESIGN §7): DRAM/SSD payload tiers, the HTTP control and engine API, the CLI,
 * configuration validation, metrics, and the wiring of membership, inventory, index, transfer and
 * recovery. A launcher: it exports nothing.
 */
module orbitkv.server {
    requires orbitkv.membership;
    requires orbitkv.inventory;
    requires orbitkv.index;
    requires orbitkv.transfer;
    requires orbitkv.recovery;

    requires info.picocli;
    requires com.fasterxml.jackson.databind;
    requires io.netty.common;
    requires io.netty.buffer;
    requires io.netty.transport;
    requires io.netty.codec.http;
    requires io.netty.codec;
    requires io.netty.handler;
    requires io.netty.transport.unix.common;
    requires io.netty.transport.classes.epoll;
    requires io.netty.transport.classes.io_uring;
    requires io.grpc.netty;
    requires io.grpc.util; // MutableHandlerRegistry: peer services are added after registration
    requires io.prometheus.metrics.core;
    requires io.prometheus.writer.text;
    requires io.prometheus.metrics.model;
    requires org.slf4j;
    requires java.net.http; // orbitkv demo talks to its Managers and its etcd over HTTP
    requires jul.to.slf4j;
    requires jdk.jfr; // the HTTP API's flight-recorder event (HttpRequest), off unless a recording asks for it
    requires jdk.unsupported; // sun.misc.Signal: SIGTERM drains and exits 0 instead of the JVM default 143

    // picocli instantiates command classes and injects @Option/@Parameters fields reflectively.
    opens orbitkv.server.cli to info.picocli;
    // Jackson serializes the API's response records (orbitkv.server.api: ApiModel, PrefixQueryResponse, CacheLimits),
    // and the incarnation's status records (IncarnationStatus, HealReport) in place, which the HTTP adapter answers
    // without copying them into DTOs; nothing else is opened (the HTTP adapter itself serializes none of its own types).
    opens orbitkv.server.api to com.fasterxml.jackson.databind;
    opens orbitkv.server.incarnation to com.fasterxml.jackson.databind;
}
