package orbitkv.transfer;

import java.util.Objects;

/**
 * Completed READs of one (backend, route class) pair: the label pair is closed (2 x 2).
 *
 * @param backend the backend
 * @param route the route class
 * @param reads completed (verified) READs
 * @param bytes their bytes
 * @param latency admission-to-verified-completion latency of those READs
 */
public record RouteStatus(Backend backend, PeerRouteClass route, long reads, long bytes, LatencyHistogram latency) {
    public RouteStatus {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(route, "route");
        Objects.requireNonNull(latency, "latency");
    }
}
