package orbitkv.server.runtime;

import java.io.IOException;
import java.net.InetSocketAddress;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.incarnation.StandaloneMetadata;

/**
 * A running {@code orbitkv manager --standalone}: local tiers, the source inventory and the HTTP API, no
 * etcd, no peer listener (INV-10); start-up and shutdown are {@link ManagerCore}'s. Shutdown (SIGTERM) stops
 * admission, drains admitted requests within {@code --shutdown-drain-ms}, then closes the listener and the
 * tiers (the DRAM arena file and SSD block files are deleted).
 */
public final class StandaloneManager implements RunningManager {
    private final ManagerCore core;
    private final Incarnation incarnation;
    private final StopSequence stop = new StopSequence();

    private StandaloneManager(ManagerCore core, Incarnation incarnation) {
        this.core = core;
        this.incarnation = incarnation;
    }

    /**
     * Opens the tiers and starts serving.
     *
     * @param api binds the API listener (the HTTP adapter's, passed by the process entry point)
     *
     * @throws IllegalArgumentException if {@code config} is not standalone
     */
    public static StandaloneManager start(ManagerConfig config, ApiListener.Binder api) throws IOException, InterruptedException {
        if (!config.standalone()) {
            throw new IllegalArgumentException("StandaloneManager needs a --standalone configuration");
        }
        ManagerCore core = ManagerCore.open(config, api);
        try {
            // A standalone incarnation is local and unregistered: epoch 1, random id, never admitted by peers.
            Incarnation incarnation = Incarnation.random(config.nodeId(), new NodeEpoch(1));
            core.local().recordIncarnation(incarnation.toString());
            core.http().serve(new StandaloneMetadata(config.cluster(), incarnation, config.scope()));
            return new StandaloneManager(core, incarnation);
        } catch (RuntimeException e) {
            core.close();
            throw e;
        }
    }

    public InetSocketAddress httpAddress() {
        return core.http().boundAddress();
    }

    public Incarnation incarnation() {
        return incarnation;
    }

    /** {@code orbitkv manager ready http=HOST:PORT peer=none incarnation=node/epoch/uuid} (DESIGN §7). */
    @Override
    public String readyLine() {
        return ReadyLine.of(httpAddress(), null, incarnation, core.transport(), "standalone");
    }

    @Override
    public boolean shutdown() throws InterruptedException {
        return stop.runOnce(() -> {
            boolean drained = core.stopAndDrain();
            core.close();
            return drained;
        });
    }

    @Override
    public void awaitStopped() throws InterruptedException {
        stop.awaitDone();
    }
}
