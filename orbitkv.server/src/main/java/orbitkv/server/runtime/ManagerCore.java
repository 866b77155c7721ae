package orbitkv.server.runtime;

import java.io.IOException;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.metrics.AdmissionMetricFamilies;
import orbitkv.server.metrics.ManagerMetrics;
import orbitkv.server.metrics.RouteMetricFamilies;
import orbitkv.server.metrics.TierMetricFamilies;
import orbitkv.server.net.NativeTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the standalone and the distributed Manager start and stop the same way, in one place: the native
 * transport, the local cache (tiers and source inventory), the recovery planner and the one metrics registry
 * (issue 34 item 2: created here, not by the HTTP adapter), the API listener bound but not yet serving (the
 * caller serves once its metadata exists), and the first and last steps of shutdown. Neither side effect
 * happens before {@link ManagerConfig#from} accepted the whole configuration.
 *
 * @param config the validated configuration
 * @param transport io_uring or epoll
 * @param local the tiers and their source inventory
 * @param routes the recovery planner (issue 14): restores and queries plan with it; closed after the listener
 * @param metrics the one registry of this process: the planner's and the tiers' status families (added here) and the
 *     incarnation's (added by the runtime) read one status snapshot per scrape; the HTTP adapter's event counters join it
 * @param http the API listener
 */
record ManagerCore(ManagerConfig config, NativeTransport transport, LocalCache local, RouteSelection routes,
                   ManagerMetrics metrics, ApiListener http) implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ManagerCore.class);

    /** Creates the planner, opens the local cache and binds the API listener; nothing is accepted yet. */
    static ManagerCore open(ManagerConfig config, ApiListener.Binder binder) throws IOException, InterruptedException {
        NativeTransport transport = NativeTransport.detect();
        // the planner first: a trace directory inside a git checkout is refused at start, before anything binds
        RouteSelection routes = RouteSelection.create(config.routePolicy(), config.routeTraceSampling(), System::nanoTime);
        LocalCache local;
        try {
            local = LocalCache.open(config);
        } catch (IOException | RuntimeException e) {
            routes.close();
            throw e;
        }
        try {
            ManagerMetrics metrics = ManagerMetrics.create();
            metrics.add(routes::metrics, RouteMetricFamilies.FAMILIES);
            TierMetricFamilies.register(metrics, local.tiers());
            local.tiers().admission().ifPresent(a -> metrics.add(a::status, AdmissionMetricFamilies.FAMILIES)); // issue 39
            return new ManagerCore(config, transport, local, routes, metrics,
                    binder.bind(config, local.tiers(), transport, routes, metrics.registry()));
        } catch (InterruptedException | RuntimeException e) {
            closeTiers(local);
            routes.close();
            throw e;
        }
    }

    /** Shutdown, first steps: stop HTTP admission (503 SHUTTING_DOWN), drain within --shutdown-drain-ms. */
    boolean stopAndDrain() throws InterruptedException {
        http.stopAdmission();
        boolean drained = http.drain(config.http().shutdownDrainMs());
        if (!drained) {
            LOG.warn("shutdown: requests still running after {} ms; closing", config.http().shutdownDrainMs());
        }
        return drained;
    }

    /** Shutdown, last steps: close the API listener, the planner and the tiers (the DRAM arena and SSD files are deleted). */
    @Override
    public void close() {
        http.close();
        routes.close();
        closeTiers(local);
    }

    private static void closeTiers(LocalCache local) {
        try {
            local.close();
        } catch (IOException e) {
            LOG.warn("closing the tiers failed: {}", e.toString());
        }
    }
}
