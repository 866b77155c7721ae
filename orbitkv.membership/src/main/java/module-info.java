/**
 * Membership: cluster identity, the etcd format guard, node epochs, incarnations, leases, the
 * membership watch and views, and irrevocable fencing (DESIGN §3; RULES MEM-*, INV-7).
 *
 * <p>Exports only the contract package {@code orbitkv.membership}. The etcd implementation lives in
 * non-exported packages; jetcd never appears in an exported signature, so it is not transitive.
 */
module orbitkv.membership {
    exports orbitkv.membership;

    requires jetcd.core;
    requires jetcd.common; // CompactedException, EtcdException (watch gap and error codes)
    requires io.grpc; // the per-call deadline interceptor and Status codes
    requires com.fasterxml.jackson.databind; // the backup file
    requires io.grpc.netty; // GrpcSslContexts: client TLS toward etcd (jetcd's channel is grpc-netty's)
    requires io.netty.handler; // SslContext, which jetcd's ClientBuilder takes
    // EtcdTlsProbe: one Netty TLS connection per endpoint with that SslContext names a handshake refusal (issue 33)
    requires io.netty.common;
    requires io.netty.buffer;
    requires io.netty.transport;
    requires org.slf4j;
}
