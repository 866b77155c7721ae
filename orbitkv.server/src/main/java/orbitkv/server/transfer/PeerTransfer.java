package orbitkv.server.transfer;

import io.grpc.BindableService;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Optional;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.MembershipView;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.net.PeerChannels;
import orbitkv.server.net.TransferChannels;
import orbitkv.server.tier.LocalTiers;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.DataChannelTls;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.TransferEngine;
import orbitkv.transfer.TransferEngineStatus;
import orbitkv.transfer.TransferSource;
import orbitkv.transfer.TransferSourceStatus;
import orbitkv.transfer.TransferTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Both ends of transfer in one distributed Manager (DESIGN §8, docs/transfer.md "Wiring"): the source (the
 * tiers as its {@code PayloadSource}, the authorization service for the peer listener, the data listener on
 * the peer listener's host) and the requester engine (Authorize and Release over this Manager's peer channels,
 * mutual TLS when configured; READs over its own data connections). Each end builds and owns its data-plane
 * event loops, apart from the gRPC and HTTP loops.
 *
 * <p>Membership: every event's view goes to the source (a valid view without a requester's incarnation ends
 * that requester's grants) and prunes the channel cache; {@code Fenced} fences the source (INV-7). Stop:
 * {@link #close()} after HTTP drained and before the peer listener and membership close: the engine first (it
 * asks sources to release what it still tracks), then the source (every grant ends, the data listener closes),
 * then the channels.
 */
public final class PeerTransfer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerTransfer.class);

    private final TransferSource source;
    private final TransferEngine engine;
    private final TransferChannels channels;
    private final Membership membership;
    private final BackendPolicy defaultBackend;
    private final TransferConfig config;
    private final ReceiveCredits receiveCredits;
    private final Optional<orbitkv.server.admission.NodeAdmissionService> admission;
    private final int restoreReadsInFlightPerRoute;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    private PeerTransfer(TransferSource source, TransferEngine engine, TransferChannels channels, Membership membership,
            BackendPolicy defaultBackend, TransferConfig config, int restoreReadsInFlightPerRoute,
            Optional<orbitkv.server.admission.NodeAdmissionService> admission) {
        this.source = source;
        this.engine = engine;
        this.channels = channels;
        this.membership = membership;
        this.defaultBackend = defaultBackend;
        this.config = config;
        this.receiveCredits = new ReceiveCredits(config.receiveInFlightBytesMax());
        this.admission = admission; // issue 39: peer routes ask it for room, their READs are charged to it one by one
        this.restoreReadsInFlightPerRoute = restoreReadsInFlightPerRoute;
    }

    /**
     * Starts the source (data listener bound on {@code peerHost} at {@code --transfer-data-port}) and the engine.
     *
     * @param peerHost the host the peer listener is advertised under (a specific address: it is named in grants)
     * @throws IOException if the data listener cannot bind
     */
    public static PeerTransfer start(ManagerConfig config, LocalTiers tiers, Membership membership,
            PeerChannels peerChannels, NativeTransport transport, String peerHost) throws IOException {
        TransferConfig tc = config.transferConfig();
        TransferTransport tt = transport(transport);
        InetSocketAddress bind = new InetSocketAddress(InetAddress.getByName(peerHost), config.transfer().dataPort());
        // issue 33: the data channel runs TLS with the peer mutual-TLS files exactly when the peer listener does
        Optional<DataChannelTls> tls = config.peerTls().map(t -> new DataChannelTls(t.certFile(), t.keyFile(), t.caFile(),
                config.transfer().tlsProvider()));
        // issue 39 item 2: every send is charged to the tx lane of the data listener's NIC in the node admission window
        orbitkv.transfer.EgressAccount egress = tiers.admission().<orbitkv.transfer.EgressAccount>map(NodeEgressAccount::new)
                .orElse(orbitkv.transfer.EgressAccount.NONE);
        TransferSource source = TransferSource.start(tiers, membership.cluster(), membership.incarnation(), membership::view,
                tc, bind, config.transfer().dataAdvertise().map(PeerTransfer::endpoint), tt, tls, egress);
        LOG.info("transfer: source egress on NIC {} charged to {}", source.egressNic(), tiers.admission()
                .map(a -> a.egressLane(source.egressNic()).map(Object::toString).orElse("nothing (not in --admission-nics)"))
                .orElse("nothing (--admission-disabled)"));
        TransferChannels channels = new TransferChannels(peerChannels);
        TransferEngine engine;
        try {
            engine = TransferEngine.create(tc, membership.cluster(), membership::incarnation, channels::channel, tt, tls);
        } catch (RuntimeException e) {
            source.close();
            throw e;
        }
        LOG.info("transfer: data listener {} on {} (advertised {}, {}), READ backend {} by default", bind, tt,
                source.dataEndpoint(), tls.isPresent() ? "mutual TLS with the peer certificate, --transfer-tls-provider "
                        + config.transfer().tlsProvider().name().toLowerCase(java.util.Locale.ROOT) + " = "
                        + orbitkv.server.config.PeerTls.sslProvider(config.transfer().tlsProvider())
                        + (io.netty.handler.ssl.OpenSsl.isAvailable() ? " (" + io.netty.handler.ssl.OpenSsl.versionString() + " loadable)"
                                : " (OpenSSL not loadable: " + io.netty.handler.ssl.OpenSsl.unavailabilityCause() + ")")
                        : "plaintext, grant secrets",
                config.transfer().backend());
        return new PeerTransfer(source, engine, channels, membership, config.transfer().backend(), tc,
                config.transfer().restoreRouteReadsInFlightMax(), tiers.admission());
    }

    private static Endpoint endpoint(orbitkv.server.config.ListenAddress a) {
        return new Endpoint(a.host(), a.port());
    }

    /** The Manager's native transport as transfer names it. */
    static TransferTransport transport(NativeTransport t) {
        return switch (t.name()) {
            case "io_uring" -> TransferTransport.IO_URING;
            case "epoll" -> TransferTransport.EPOLL;
            default -> throw new IllegalStateException("unknown native transport " + t.name());
        };
    }

    /** The {@code orbitkv.transfer.v1.TransferAuthorization} service for the peer listener. */
    public BindableService authorizationService() {
        return source.authorizationService();
    }

    /** A membership event (after the index saw it): exclusion ends grants; a fence fences the source. */
    public void onMembershipEvent(MembershipEvent event) {
        if (event instanceof MembershipEvent.Fenced) {
            source.fence();
            return;
        }
        MembershipView view = event.view();
        source.onMembership(view);
        if (view.valid()) {
            channels.retain(view.members().stream().map(Member::peer).toList());
        }
    }

    /** The admitted member that is exactly {@code owner} in the current view, if any. */
    public Optional<Member> member(Incarnation owner) {
        MembershipView view = membership.view();
        if (!view.isAdmitted(owner)) {
            return Optional.empty();
        }
        return view.member(owner.nodeId()).filter(m -> m.incarnation().equals(owner));
    }

    /** This Manager's registered incarnation (never a peer route of its own restores). */
    public Incarnation self() {
        return membership.incarnation();
    }

    public TransferEngine engine() {
        return engine;
    }

    /** The receive credits peer routes take before their authorization (ROUTE-11). */
    public ReceiveCredits receiveCredits() {
        return receiveCredits;
    }

    /** The node-local admission window (issue 39), empty with {@code --admission-disabled}. */
    public Optional<orbitkv.server.admission.NodeAdmissionService> admission() {
        return admission;
    }

    public BackendPolicy defaultBackend() {
        return defaultBackend;
    }

    public TransferConfig config() {
        return config;
    }

    /** READs of one peer restore route in flight at once ({@code --restore-route-reads-in-flight-max}). */
    public int restoreReadsInFlightPerRoute() {
        return restoreReadsInFlightPerRoute;
    }

    public Endpoint dataEndpoint() {
        return source.dataEndpoint();
    }

    public TransferSourceStatus sourceStatus() {
        return source.status();
    }

    public TransferEngineStatus engineStatus() {
        return engine.status();
    }

    public int channelsOpen() {
        return channels.size();
    }

    /** Idempotent: a heal closes the fenced incarnation's transfer before its final close. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        engine.close();
        source.close();
        channels.close();
    }
}
