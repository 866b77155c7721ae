package orbitkv.server.runtime;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.http.HttpApiServer;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.server.tier.SsdTier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running {@code orbitkv manager --standalone}: local tiers and the HTTP API, no etcd, no peer listener
 * (INV-10). Shutdown (SIGTERM) stops admission, drains admitted requests within {@code --shutdown-drain-ms},
 * then closes the listener and the tiers (the DRAM arena file and SSD block files are deleted).
 */
public final class StandaloneManager {
    private static final Logger LOG = LoggerFactory.getLogger(StandaloneManager.class);

    private final ManagerConfig config;
    private final LocalTiers tiers;
    private final HttpApiServer http;
    private final Incarnation incarnation;
    private final NativeTransport transport;
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final CountDownLatch stopped = new CountDownLatch(1);

    private StandaloneManager(ManagerConfig config, LocalTiers tiers, HttpApiServer http, Incarnation incarnation,
                              NativeTransport transport) {
        this.config = config;
        this.tiers = tiers;
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
        ResidencySequence sequence = new ResidencySequence();
        DramTier dram = DramTier.open(config.tiers().dramDir(), config.tiers().dramBytes(), config.tiers().dramPinsMax(), sequence);
        SsdTier ssd = null;
        try {
            if (config.tiers().hasSsd()) {
                ssd = SsdTier.open(config.tiers().ssdDir(), config.tiers().ssdBytes(), config.tiers().ssdPinsMax(),
                        config.tiers().ssdQueueWritesMax(), config.tiers().ssdQueueBytesMax(), sequence);
            }
            LocalTiers tiers = new LocalTiers(dram, ssd, sequence);
            // A standalone incarnation is local and unregistered: epoch 1, random id, never admitted by peers.
            Incarnation incarnation = Incarnation.random(config.nodeId(), new NodeEpoch(1));
            HttpApiServer http = HttpApiServer.startStandalone(config, tiers, incarnation, transport);
            return new StandaloneManager(config, tiers, http, incarnation, transport);
        } catch (IOException | InterruptedException | RuntimeException e) {
            if (ssd != null) {
                ssd.close();
            }
            dram.close();
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
    public String readyLine() {
        InetSocketAddress a = httpAddress();
        String host = a.getAddress().getHostAddress();
        String hostPort = host.indexOf(':') >= 0 ? "[" + host + "]:" + a.getPort() : host + ":" + a.getPort();
        return "orbitkv manager ready http=" + hostPort + " peer=none incarnation=" + incarnation
                + " transport=" + transport.name() + " mode=standalone";
    }

    /**
     * Stop admission, drain, close. Idempotent; a second caller waits for the first.
     *
     * @return true if every admitted request finished within the drain bound
     */
    public boolean shutdown() throws InterruptedException {
        if (!stopping.compareAndSet(false, true)) {
            stopped.await();
            return true;
        }
        boolean drained = false;
        try {
            http.stopAdmission();
            drained = http.drain(config.http().shutdownDrainMs());
            if (!drained) {
                LOG.warn("shutdown: requests still running after {} ms; closing", config.http().shutdownDrainMs());
            }
            http.close();
            tiers.close();
        } catch (IOException e) {
            LOG.warn("shutdown: closing the tiers failed: {}", e.toString());
        } finally {
            stopped.countDown();
        }
        return drained;
    }

    /** Blocks until {@link #shutdown()} has completed. */
    public void awaitStopped() throws InterruptedException {
        stopped.await();
    }
}
