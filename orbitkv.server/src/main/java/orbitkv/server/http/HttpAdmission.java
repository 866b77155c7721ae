package orbitkv.server.http;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;

/**
 * What every connection's handler shares for admission (INV-9): the request slots
 * ({@code --http-requests-in-flight-max}), the probe slots of /health and /metrics
 * ({@code --http-probes-in-flight-max}, so slow or stalled requests holding every request slot never make the
 * probes answer 429), the body bytes budget, and the shutdown switch.
 */
final class HttpAdmission {
    private final int requestSlots;
    private final int probeSlots;
    private final Semaphore requests;
    private final Semaphore probes;
    private final BodyBytesBudget bodyBytes;
    private volatile boolean accepting = true;

    HttpAdmission(HttpLimits limits) {
        this.requestSlots = limits.requestsInFlightMax();
        this.probeSlots = limits.probesInFlightMax();
        this.requests = new Semaphore(limits.requestsInFlightMax());
        this.probes = new Semaphore(limits.probesInFlightMax());
        this.bodyBytes = new BodyBytesBudget(limits.bodyBytesInFlightMax(), limits.bodyBytesInFlightPerClientMax());
    }

    /**
     * Admits a request to {@code endpoint}: 503 {@code SHUTTING_DOWN} once the drain began, 429 when every slot of
     * its kind (probe or request) is taken; otherwise the caller holds one slot until it releases it.
     */
    void admit(ApiEndpoint endpoint) {
        if (!accepting) {
            throw new ApiException(ApiError.SHUTTING_DOWN, "the Manager is shutting down");
        }
        if (!tryAcquire(endpoint)) {
            throw endpoint.access == ApiEndpoint.Access.PROBE
                    ? new ApiException(ApiError.TOO_MANY_PROBES_IN_FLIGHT, "more than " + probeSlots
                            + " /health and /metrics requests are in flight")
                    : new ApiException(ApiError.TOO_MANY_REQUESTS_IN_FLIGHT, "more than " + requestSlots
                            + " requests are in flight");
        }
    }

    /** A slot of the endpoint's kind; false when every slot of that kind is taken. */
    boolean tryAcquire(ApiEndpoint endpoint) {
        return slots(endpoint).tryAcquire();
    }

    void release(ApiEndpoint endpoint) {
        slots(endpoint).release();
    }

    private Semaphore slots(ApiEndpoint endpoint) {
        return endpoint.access == ApiEndpoint.Access.PROBE ? probes : requests;
    }

    /** Reserves {@code bytes} of request body for {@code client}; 429 when the whole or the client's share is used up. */
    void reserveBody(Object client, long bytes) {
        switch (bodyBytes.tryReserve(client, bytes)) {
            case ADMITTED -> {
                // reserved
            }
            case TOTAL_EXCEEDED -> throw new ApiException(ApiError.TOO_MANY_BODY_BYTES_IN_FLIGHT, "admitting " + bytes
                    + " more body bytes would exceed --http-body-bytes-in-flight-max (" + bodyBytes.max()
                    + " bytes across all connections); retry later");
            case CLIENT_EXCEEDED -> throw new ApiException(ApiError.TOO_MANY_CLIENT_BODY_BYTES_IN_FLIGHT, "admitting "
                    + bytes + " more body bytes would exceed this client's share, --http-body-bytes-in-flight-per-client-max ("
                    + bodyBytes.perClientMax() + " bytes across its connections); retry later");
        }
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
