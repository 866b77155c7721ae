/**
 * The conformance suite (DESIGN §2, §10): interval tables, property tests, real-etcd and real-Manager
 * gates, fault injection, the adversarial v4 peer, performance harnesses. It sees only exported
 * packages of the orbitkv modules, exactly as another implementation's tests would.
 *
 * <p>{@code orbitkv.conformance.peer} is the adversarial v4 peer (a test-owned source and requester that
 * speak the wire directly), packaged as main code so it can be pointed at another implementation's endpoint
 * (it takes and exposes plain host:port endpoints). It is not exported: the module exports nothing
 * (docs/architecture.md allowlist); a harness on the class path, or a test of this module, drives it.
 */
module orbitkv.conformance {
    requires orbitkv.membership;
    requires orbitkv.inventory;
    requires orbitkv.index;
    requires orbitkv.transfer;
    requires orbitkv.recovery;
    requires orbitkv.server;
    requires java.net.http; // real-Manager gates talk to Manager processes over HTTP
    requires com.fasterxml.jackson.databind; // ... and read their JSON answers
    requires io.grpc.netty; // the adversarial peer's own channels and server
    requires java.management; // the performance harnesses read thread CPU time (ThreadMXBean)

    // The adversarial v4 peer is the suite's one public tool: another implementation's tests drive it.
    exports orbitkv.conformance.peer;
}
