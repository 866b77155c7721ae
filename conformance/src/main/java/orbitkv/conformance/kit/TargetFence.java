package orbitkv.conformance.kit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KeyValue;
import io.grpc.netty.GrpcSslContexts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.EtcdTls;
import orbitkv.membership.Incarnation;

/**
 * The kit's destructive mode ({@code --allow-fencing}, docs/conformance-kit.md): revokes the lease of the
 * target's member record {@code /orbitkv/v2/<cluster>/members/<node>} in the target's etcd, as a lost lease
 * would end it. The target must then fence itself (INV-7: remote admission stops, its sessions close with
 * {@code FENCED}) and may heal only as a new incarnation. Only a record that names the target's current
 * incarnation is revoked; nothing else in etcd is touched.
 */
final class TargetFence implements TargetFaults, AutoCloseable {
    private final Client client;
    private final String cluster;
    private final Duration callTimeout;

    TargetFence(EtcdEndpoints etcd, String cluster, Duration callTimeout) {
        ClientBuilder b = Client.builder().endpoints(etcd.urls().toArray(new java.net.URI[0])).connectTimeout(callTimeout);
        etcd.tls().ifPresent(tls -> b.sslContext(sslContext(tls)));
        this.client = b.build();
        this.cluster = cluster;
        this.callTimeout = callTimeout;
    }

    /**
     * Revokes the lease of {@code target}'s member record. Fails (the row fails) if the record is absent, names
     * another incarnation, or etcd does not answer within the call timeout.
     */
    @Override
    public void revoke(Incarnation target) throws InterruptedException {
        String key = "/orbitkv/v2/" + cluster + "/members/" + target.nodeId().value();
        try {
            List<KeyValue> kvs = client.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8))
                    .get(callTimeout.toMillis(), TimeUnit.MILLISECONDS).getKvs();
            Expect.that(!kvs.isEmpty(), "the target's member record " + key + " exists in etcd");
            String record = kvs.getFirst().getValue().toString(StandardCharsets.UTF_8);
            Expect.that(record.contains(target.id().toString()), "the member record " + key + " names the target's incarnation "
                    + target + " (got " + record + ")");
            long lease = kvs.getFirst().getLease();
            Expect.that(lease != 0, "the member record " + key + " is leased");
            client.getLeaseClient().revoke(lease).get(callTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("etcd did not revoke the target's lease (" + key + "): " + e, e);
        }
    }

    private static io.netty.handler.ssl.SslContext sslContext(EtcdTls tls) {
        try {
            return GrpcSslContexts.forClient().trustManager(tls.caFile().toFile())
                    .keyManager(tls.certFile().toFile(), tls.keyFile().toFile()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("etcd TLS: cannot load CA " + tls.caFile() + ", certificate " + tls.certFile()
                    + " or key " + tls.keyFile() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
