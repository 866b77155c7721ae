package orbitkv.server.incarnation;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.server.transfer.PeerTransfer;

/**
 * The distributed metadata of whichever incarnation of this process currently runs (issue 17 item 5): the
 * HTTP API serves through it, a heal {@linkplain #install installs} the new incarnation's
 * {@link ClusterMetadata}. Until then every answer is the fenced incarnation's: local save, query, restore
 * and evict keep working, remote coverage is {@code Unavailable}, sync and await answer 503
 * {@code MEMBERSHIP_EXPIRED} (INV-7, INV-10). A request is answered by the incarnation that was current
 * when it asked; a fenced incarnation never becomes current again.
 *
 * <p>Status adds {@code membership.heal} ({@link HealReport}); the metric families (orbitkv.server.metrics) register
 * once and read the current incarnation when scraped, plus the heal families.
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
    public Optional<IncarnationStatus.Fence> fence() {
        return current.fence();
    }

    @Override
    public IncarnationStatus.AwaitResponse await(AwaitRequest request) throws InterruptedException {
        return current.await(request);
    }

    /** IDX-6: the current incarnation's scope changes (a heal keeps the scope that served when it was fenced). */
    @Override
    public IncarnationStatus.ScopeChange changeScope(orbitkv.inventory.Scope scope, long timeoutMs) {
        return current.changeScope(scope, timeoutMs);
    }

    @Override
    public IncarnationStatus.StatusResponse status(int ownersLimit, String pageToken, long headSequence) {
        IncarnationStatus.StatusResponse s = current.status(ownersLimit, pageToken, headSequence);
        return new IncarnationStatus.StatusResponse(s.protocol(), s.cluster(), s.self(), s.scope(),
                s.membership().withHeal(heal.get()), s.coverage(), s.inventory(), s.owners(), s.nextPageToken(),
                s.sessions(), s.transfer());
    }

    /** The current incarnation's transfer ends (peer restores go through the incarnation that serves now). */
    @Override
    public Optional<PeerTransfer> transfer() {
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
    public List<String> sourceSessionsRefusedMembers() {
        return current.sourceSessionsRefusedMembers();
    }

    @Override
    public IncarnationStatus.Owner self() {
        return current.self();
    }

    /** How healing goes now (read on every status and scrape). */
    public HealReport heal() {
        return heal.get();
    }
}
