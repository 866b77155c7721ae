package orbitkv.server.http;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * What every connection's handler shares for admission (INV-9): the request slots
 * ({@code --http-requests-in-flight-max}), the probe slots of /health and /metrics
 * ({@code --http-probes-in-flight-max}, so slow or stalled requests holding every request slot never make the
 * probes answer 429), the body bytes budget, and the shutdown switch.
 */
final class HttpAdmission {
    private final int requestSlots;
    private final Semaphore requests;
    private final Semaphore probes;
    private final BodyBytesBudget bodyBytes;
    private volatile boolean accepting = true;

    HttpAdmission(HttpLimits limits) {
        this.requestSlots = limits.requestsInFlightMax();
        this.requests = new Semaphore(limits.requestsInFlightMax());
        this.probes = new Semaphore(limits.probesInFlightMax());
        this.bodyBytes = new BodyBytesBudget(limits.bodyBytesInFlightMax(), limits.bodyBytesInFlightPerClientMax());
    }

    /** A slot of the endpoint's kind; false when every slot of that kind is taken. */
    boolean tryAcquire(Endpoint endpoint) {
        return slots(endpoint).tryAcquire();
    }

    void release(Endpoint endpoint) {
        slots(endpoint).release();
    }

    private Semaphore slots(Endpoint endpoint) {
        return endpoint.access == Endpoint.Access.PROBE ? probes : requests;
    }

    BodyBytesBudget bodyBytes() {
        return bodyBytes;
    }

    int requestsInFlight() {
        return requestSlots - requests.availablePermits();
    }

    boolean accepting() {
        return accepting;
    }

    void stopAccepting() {
        accepting = false;
    }

    /** Waits until every request slot is free (all admitted requests answered); false on timeout. */
    boolean drain(long timeoutMs) throws InterruptedException {
        if (requests.tryAcquire(requestSlots, timeoutMs, TimeUnit.MILLISECONDS)) {
            requests.release(requestSlots);
            return true;
        }
        return false;
    }
}
