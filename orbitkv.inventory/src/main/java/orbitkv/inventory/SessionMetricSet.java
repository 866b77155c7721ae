package orbitkv.inventory;

import io.prometheus.metrics.core.metrics.Metric;
import java.util.List;

/**
 * The InventorySession metrics of one process (DIAG-3), shared by its source end ({@link InventorySessionServer})
 * and its requester end ({@link InventorySubscriber}): the {@code side} label separates their data points, so
 * both ends count into one family per name. Create one per process, hand it to both ends, and register
 * {@link #metrics()} once with the owner's registry. Label sets are bounded (frame body kinds, wire
 * ErrorCause and ResetCause names, encoded/decoded, pages/replay); never a per-key or per-peer label.
 */
public sealed interface SessionMetricSet permits orbitkv.inventory.session.SessionMetrics {
    /** A new, unregistered set. */
    static SessionMetricSet create() {
        return new orbitkv.inventory.session.SessionMetrics();
    }

    /** The metrics, unregistered: the owner of the registry registers them once. */
    List<Metric> metrics();
}
