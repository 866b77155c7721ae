package orbitkv.server.runtime;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetSocketAddress;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.incarnation.DistributedMetadata;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.LocalTiers;

/**
 * The Manager's API listener as the Manager core drives it (issue 34 item 2): bound before registration (its
 * address goes into the member record), serving once the metadata exists, and stopped in the shutdown order. The
 * HTTP adapter implements it; the core never names HTTP types, so the import arrow runs from the adapter to the
 * core. Only the process entry point (orbitkv.server.cli) knows both and passes the {@link Binder}.
 */
public interface ApiListener extends AutoCloseable {
    /** Binds a listener that accepts nothing yet, over the core's planner and metrics registry. */
    @FunctionalInterface
    interface Binder {
        /**
         * @param routes the Manager's recovery planner (owned and closed by the core)
         * @param registry the Manager's one metrics registry (created by the core)
         */
        ApiListener bind(ManagerConfig config, LocalTiers tiers, NativeTransport transport, RouteSelection routes,
                         PrometheusRegistry registry) throws InterruptedException;
    }

    /** The bound address (the chosen port when the configuration said 0). */
    InetSocketAddress boundAddress();

    /** Starts accepting requests, answered with {@code metadata}. */
    void serve(DistributedMetadata metadata);

    /** Shutdown, first step: new requests are answered 503 SHUTTING_DOWN. */
    void stopAdmission();

    /** Waits for the admitted requests, at most {@code timeoutMs}; false on timeout. */
    boolean drain(long timeoutMs) throws InterruptedException;

    @Override
    void close();
}
