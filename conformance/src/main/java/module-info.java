/**
 * The conformance suite (DESIGN §2, §10): interval tables, property tests, real-etcd and real-Manager
 * gates, fault injection, the adversarial v4 peer, performance harnesses. It sees only exported
 * packages of the orbitkv modules, exactly as another implementation's tests would.
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
}
