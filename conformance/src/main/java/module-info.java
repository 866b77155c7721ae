/**
 * The conformance suite (DESIGN §2, §10): interval tables, property tests, real-etcd and real-Manager
 * gates, fault injection, the adversarial v4 peer, performance harnesses. It sees only exported
 * packages of the orbitkv modules, exactly as another implementation's tests would.
 *
 * <p>It exports one package, {@code orbitkv.conformance.peer}: the adversarial v4 peer (a test-owned source
 * and requester that speak the wire directly), packaged as main code so another implementation's tests can
 * point it at their endpoint (docs/architecture.md allowlist). Its signatures name membership types
 * ({@code Endpoint}, {@code MembershipView}) and the wire and gRPC types of the inventory contract, hence
 * {@code requires transitive} on membership and inventory (which carries grpc and protobuf); everything
 * else is required for the suite's own tests only.
 * {@code orbitkv.conformance.kit} (not exported) is the conformance kit, {@code orbitkv conformance}: it runs
 * the adversarial peer's scenarios black-box against a target given by address only
 * (docs/conformance-kit.md); the runtime image launches it as {@code bin/orbitkv-conformance}.
 */
module orbitkv.conformance {
    requires transitive orbitkv.membership;
    requires transitive orbitkv.inventory;
    requires orbitkv.index;
    requires orbitkv.transfer;
    requires orbitkv.recovery;
    requires orbitkv.server;
    requires java.net.http; // real-Manager gates talk to Manager processes over HTTP
    requires com.fasterxml.jackson.databind; // ... and read their JSON answers
    requires io.grpc.netty; // the adversarial peer's own channels and server
    requires java.management; // the performance harnesses read thread CPU time (ThreadMXBean)
    requires jdk.jfr; // ... and the Managers' flight recordings (the restore harness's per-stage report)
    requires info.picocli; // `orbitkv conformance`, the kit's command line
    requires java.xml; // the kit's JUnit XML report
    requires jetcd.core; // the kit's --allow-fencing: revoke the target's member lease (docs/conformance-kit.md)
    requires io.netty.handler; // ... over etcd client TLS (the SslContext jetcd's ClientBuilder takes)

    // picocli injects the kit's options reflectively (as orbitkv.server.cli opens to it).
    opens orbitkv.conformance.kit to info.picocli;

    // The adversarial v4 peer is the suite's one public tool: another implementation's tests drive it.
    exports orbitkv.conformance.peer;
}
