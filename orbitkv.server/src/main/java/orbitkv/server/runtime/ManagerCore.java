package orbitkv.server.runtime;

import java.io.IOException;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.http.HttpApiServer;
import orbitkv.server.net.NativeTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the standalone and the distributed Manager start and stop the same way, in one place: the native
 * transport, the local cache (tiers and source inventory), the HTTP API bound but not yet serving (the
 * caller serves once its metadata exists), and the first and last steps of shutdown. Neither side effect
 * happens before {@link ManagerConfig#from} accepted the whole configuration.
 *
 * @param config the validated configuration
 * @param transport io_uring or epoll
 * @param local the tiers and their source inventory
 * @param http the HTTP API listener
 */
record ManagerCore(ManagerConfig config, NativeTransport transport, LocalCache local, HttpApiServer http)
        implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ManagerCore.class);

    /** Opens the local cache and binds the HTTP listener; nothing is accepted yet. */
    static ManagerCore open(ManagerConfig config) throws IOException, InterruptedException {
        NativeTransport transport = NativeTransport.detect();
        LocalCache local = LocalCache.open(config);
        try {
            return new ManagerCore(config, transport, local, HttpApiServer.bind(config, local.tiers(), transport));
        } catch (InterruptedException | RuntimeException e) {
            closeTiers(local);
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

    /** Shutdown, last steps: close the HTTP API and the tiers (the DRAM arena and SSD files are deleted). */
    @Override
    public void close() {
        http.close();
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
