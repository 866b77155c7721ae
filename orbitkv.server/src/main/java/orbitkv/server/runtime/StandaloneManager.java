package orbitkv.server.runtime;

import java.io.IOException;
import java.net.InetSocketAddress;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.http.HttpApiServer;
import orbitkv.server.net.NativeTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running {@code orbitkv manager --standalone}: local tiers, the source inventory and the HTTP API, no
 * etcd, no peer listener (INV-10). Shutdown (SIGTERM) stops admission, drains admitted requests within
 * {@code --shutdown-drain-ms}, then closes the listener and the tiers (the DRAM arena file and SSD block
 * files are deleted).
 */
public final class StandaloneManager implements RunningManager {
    private static final Logger LOG = LoggerFactory.getLogger(StandaloneManager.class);

    private final ManagerConfig config;
    private final LocalCache local;
    private final HttpApiServer http;
    private final Incarnation incarnation;
    private final NativeTransport transport;
    private final StopSequence stop = new StopSequence();

    private StandaloneManager(ManagerConfig config, LocalCache local, HttpApiServer http, Incarnation incarnation,
                              NativeTransport transport) {
        this.config = config;
        this.local = local;
        this.http = http;
        this.incarnation = incarnation;
        this.transport = transport;
    }

    /**
     * Opens the tiers and starts serving.
     *
     * @throws IllegalArgumentException if {@code config} is not standalone
     */
    public static StandaloneManager start(ManagerConfig config) throws IOException, InterruptedException {
        if (!config.standalone()) {
            throw new IllegalArgumentException("StandaloneManager needs a --standalone configuration");
        }
        NativeTransport transport = NativeTransport.detect();
        LocalCache local = LocalCache.open(config);
        try {
            // A standalone incarnation is local and unregistered: epoch 1, random id, never admitted by peers.
            Incarnation incarnation = Incarnation.random(config.nodeId(), new NodeEpoch(1));
            local.recordIncarnation(incarnation.toString());
            HttpApiServer http = HttpApiServer.startStandalone(config, local.tiers(), incarnation, transport);
            return new StandaloneManager(config, local, http, incarnation, transport);
        } catch (InterruptedException | RuntimeException e) {
            local.close();
            throw e;
        }
    }

    public InetSocketAddress httpAddress() {
        return http.boundAddress();
    }

    public Incarnation incarnation() {
        return incarnation;
    }

    /** {@code orbitkv manager ready http=HOST:PORT peer=none incarnation=node/epoch/uuid} (DESIGN §7). */
    @Override
    public String readyLine() {
        return ReadyLine.of(httpAddress(), null, incarnation, transport, "standalone");
    }

    @Override
    public boolean shutdown() throws InterruptedException {
        return stop.runOnce(() -> {
            http.stopAdmission();
            boolean drained = http.drain(config.http().shutdownDrainMs());
            if (!drained) {
                LOG.warn("shutdown: requests still running after {} ms; closing", config.http().shutdownDrainMs());
            }
            http.close();
            try {
                local.close();
            } catch (IOException e) {
                LOG.warn("shutdown: closing the tiers failed: {}", e.toString());
            }
            return drained;
        });
    }

    @Override
    public void awaitStopped() throws InterruptedException {
        stop.awaitDone();
    }
}
