package orbitkv.transfer;

import io.grpc.BindableService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;

/**
 * The source side of transfer (DESIGN §8; INV-2, INV-3, INV-8, INV-9): the authorization service, the grants
 * and their bounded pins over a {@link PayloadSource}, and the TCP data listener that sends granted blocks.
 *
 * <p>Wiring (the Manager, once its incarnation is registered):
 * <ol>
 *   <li>{@link #start} with the tiers' {@link PayloadSource}, the registered incarnation, the membership view
 *       supplier, the validated {@link TransferConfig}, a bind address for the data listener, and the
 *       {@link TransferTransport} of the Manager's native transport;</li>
 *   <li>{@code peerListener.addService(source.authorizationService())} on the peer gRPC listener;</li>
 *   <li>{@link #onMembership} on every membership event's view, {@link #fence()} on {@code Fenced};</li>
 *   <li>{@link #status()} for metrics; {@link #close()} on shutdown, before the event loop group stops.</li>
 * </ol>
 *
 * <p>Threading: Authorize and Release never block (no I/O, no waiting; only the tiers' short pin locks), so a
 * listener may run them on its event loop (the Manager does: {@code PeerListener.addInlineService}); sends run on the
 * given event loops; the expiry sweep runs every {@code expirySweepIntervalMs} on one of them. All methods are
 * thread-safe.
 */
public interface TransferSource extends AutoCloseable {
    /**
     * Binds the data listener and starts the expiry sweep, on the process's monotonic clock.
     *
     * @param dataBind the data listener's address: a specific host (advertised in every grant as is) and a
     *     port, 0 for a free one; a wildcard address is refused (a grant must name a reachable host)
     * @param transport the native transport of the source's own data-plane event loops
     *     ({@link TransferConfig#sourceEventLoopThreads()} of them, owned by the source and stopped by
     *     {@link #close()})
     * @throws IOException if the listener cannot bind
     */
    static TransferSource start(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind,
            TransferTransport transport) throws IOException {
        return start(payloads, cluster, self, membership, config, dataBind, transport, System::nanoTime);
    }

    /**
     * As {@link #start}, but grants name {@code advertised} instead of the bound address: a proxy or NAT in front of
     * the data listener (the operator's {@code --transfer-data-advertise}).
     */
    static TransferSource start(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind, Endpoint advertised,
            TransferTransport transport) throws IOException {
        return orbitkv.transfer.source.Source.start(payloads, cluster, self, membership, config, dataBind,
                java.util.Objects.requireNonNull(advertised, "advertised"), transport, System::nanoTime);
    }

    /**
     * The Manager's factory: grants name {@code advertised} when present (else the bound address), and the data
     * listener runs TLS when {@code tls} is present (issue 33: the peer mutual-TLS files; a client certificate is
     * required, and a grant is served only to its requester's certificate).
     *
     * @throws IOException if the listener cannot bind or a TLS file cannot be used
     */
    static TransferSource start(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind,
            java.util.Optional<Endpoint> advertised, TransferTransport transport, java.util.Optional<DataChannelTls> tls)
            throws IOException {
        return start(payloads, cluster, self, membership, config, dataBind, advertised, transport, tls, EgressAccount.NONE);
    }

    /**
     * As above, and every send is also charged to {@code egress} on the NIC of the data listener's bound address
     * ({@link #egressNic()}; issue 39 item 2): the Manager passes the transmit lane of its node-local admission window,
     * so its peer-serving egress shares one node-wide account with engines' P/D WRITEs.
     *
     * @throws IOException if the listener cannot bind or a TLS file cannot be used
     */
    static TransferSource start(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind,
            java.util.Optional<Endpoint> advertised, TransferTransport transport, java.util.Optional<DataChannelTls> tls,
            EgressAccount egress) throws IOException {
        return orbitkv.transfer.source.Source.start(payloads, cluster, self, membership, config, dataBind,
                advertised.orElse(null), transport, System::nanoTime, tls.orElse(null), egress);
    }

    /** As {@link #start}, with an injected monotonic clock (nanoseconds) for grant expiry. */
    static TransferSource start(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind,
            TransferTransport transport, LongSupplier monotonicNanos) throws IOException {
        return orbitkv.transfer.source.Source.start(payloads, cluster, self, membership, config, dataBind, null,
                transport, monotonicNanos);
    }

    /** The {@code orbitkv.transfer.v1.TransferAuthorization} service to add to the peer gRPC listener. */
    BindableService authorizationService();

    /** The data listener's endpoint, as named in every grant. */
    Endpoint dataEndpoint();

    /**
     * The interface name of the data listener's bound address (loopback counts: {@code lo}): the NIC whose egress
     * this source's sends are charged to ({@link EgressAccount}); {@code "unknown"} when no interface has the
     * address (never for a bound listener on Linux).
     */
    String egressNic();

    /**
     * Ends the grants of every requester that a valid {@code view} does not admit (its pins go once their
     * in-flight sends complete). An invalid (suspended) view ends nothing: granted work keeps its ownership
     * until it drains or expires, and new Authorize requests are refused while it lasts (MEM-9).
     */
    void onMembership(MembershipView view);

    /** This incarnation is fenced (INV-7): every grant ends, every later Authorize and READ is refused. */
    void fence();

    /** A snapshot of grants, pins, refusals and egress. */
    TransferSourceStatus status();

    /**
     * Ends every grant, closes the data listener and its connections, stops the sweep and the source's event
     * loops. Idempotent.
     */
    @Override
    void close();
}
