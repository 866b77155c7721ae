package orbitkv.server.http;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;

/**
 * The distributed metadata of whichever incarnation of this process currently runs (issue 17 item 5): the
 * HTTP API serves through it, a heal {@linkplain #install installs} the new incarnation's
 * {@link ClusterMetadata}. Until then every answer is the fenced incarnation's: local save, query, restore
 * and evict keep working, remote coverage is {@code Unavailable}, sync and await answer 503
 * {@code MEMBERSHIP_EXPIRED} (INV-7, INV-10). A request is answered by the incarnation that was current
 * when it asked; a fenced incarnation never becomes current again.
 *
 * <p>Status adds {@code membership.heal} ({@link HealReport}); metrics register once and read the current
 * incarnation when scraped, plus the heal families.
 */
public final class CurrentIncarnation implements DistributedMetadata {
    private volatile ClusterMetadata current;
    private final Supplier<HealReport> heal;

    /**
     * @param first the metadata of the incarnation registered at start
     * @param heal the healer's report, read on every status and scrape
     */
    public CurrentIncarnation(ClusterMetadata first, Supplier<HealReport> heal) {
        this.current = Objects.requireNonNull(first, "first");
        this.heal = Objects.requireNonNull(heal, "heal");
    }

    /** Answers with {@code next} from now on (a healed incarnation). */
    public void install(ClusterMetadata next) {
        this.current = Objects.requireNonNull(next, "next");
    }

    /** The metadata answering now. */
    public ClusterMetadata current() {
        return current;
    }

    @Override
    public Lookup lookup(Namespace namespace, List<StateKey> keys) {
        return current.lookup(namespace, keys);
    }

    @Override
    public Optional<ApiModel.Fence> fence() {
        return current.fence();
    }

    @Override
    public ApiModel.AwaitResponse await(JsonRequests.AwaitRequest request) throws InterruptedException {
        return current.await(request);
    }

    @Override
    public ApiModel.StatusResponse status(int ownersLimit, String pageToken, long headSequence) {
        ApiModel.StatusResponse s = current.status(ownersLimit, pageToken, headSequence);
        return new ApiModel.StatusResponse(s.protocol(), s.cluster(), s.self(), s.scope(),
                s.membership().withHeal(heal.get()), s.coverage(), s.inventory(), s.owners(), s.nextPageToken(),
                s.sessions(), s.transfer());
    }

    /** The current incarnation's transfer ends (peer restores go through the incarnation that serves now). */
    @Override
    public Optional<orbitkv.server.transfer.PeerTransfer> transfer() {
        return current.transfer();
    }

    @Override
    public String healthStatus() {
        return current.healthStatus();
    }

    @Override
    public String mode() {
        return current.mode();
    }

    @Override
    public java.util.List<String> sourceSessionsRefusedMembers() {
        return current.sourceSessionsRefusedMembers();
    }

    @Override
    public ApiModel.Owner self() {
        return current.self();
    }

    /** The current incarnation's figures (registered once), and how healing goes (DIAG-2: no incarnation labels). */
    @Override
    public void registerMetrics(PrometheusRegistry registry) {
        ClusterMetadata.registerMetrics(registry, () -> current);
        CounterWithCallback.builder().name("orbitkv_membership_heal_attempts")
                .help("registration attempts made to heal a fenced incarnation")
                .callback(cb -> cb.call(heal.get().attempts())).register(registry);
        CounterWithCallback.builder().name("orbitkv_membership_heals")
                .help("new incarnations registered by healing a fenced one")
                .callback(cb -> cb.call(heal.get().heals())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_membership_healing")
                .help("1 while the current incarnation is fenced and heal attempts run, else 0")
                .callback(cb -> cb.call("healing".equals(heal.get().state()) ? 1 : 0)).register(registry);
        GaugeWithCallback.builder().name("orbitkv_membership_node_epoch")
                .help("node epoch of the current incarnation (a heal registers the next one)")
                .callback(cb -> cb.call(current.self().nodeEpoch())).register(registry);
    }
}
