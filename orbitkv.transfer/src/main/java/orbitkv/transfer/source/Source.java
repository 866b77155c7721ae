package orbitkv.transfer.source;

import io.grpc.BindableService;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.transfer.DataChannelTls;
import orbitkv.transfer.EgressAccount;
import orbitkv.transfer.GrantEnd;
import orbitkv.transfer.PayloadSource;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.TransferSource;
import orbitkv.transfer.TransferSourceStatus;
import orbitkv.transfer.TransferTransport;
import orbitkv.transfer.frame.CountBytesWindow;
import orbitkv.transfer.frame.EventLoops;
import orbitkv.transfer.frame.HostIdentity;
import orbitkv.transfer.frame.TlsContexts;

/** {@link TransferSource}: wires the grant table, the authorization service, the data listener and the sweep. */
public final class Source implements TransferSource {
    private final GrantTable grants;
    private final SourceCounters counters;
    private final CountBytesWindow egress;
    /** The data listener's NIC and the node-wide account of its egress (issue 39 item 2). */
    private final NicEgress nicEgress;
    private final LoadMeter load;
    private final AuthorizationService service;
    private final BindableService bindable;
    private final DataListener listener;
    private final Endpoint dataEndpoint;
    private final ScheduledFuture<?> sweep;
    /** The group this source built for itself and stops on close; null when a test lent one. */
    private final EventLoopGroup ownedGroup;
    private volatile AuthorizeCheck.SourceState state = AuthorizeCheck.SourceState.SERVING;

    private Source(PayloadSource payloads, ClusterIdentity cluster, Incarnation self, Supplier<MembershipView> membership,
            TransferConfig config, InetSocketAddress dataBind, Endpoint advertised, EventLoopGroup group,
            Class<? extends ServerChannel> serverChannel, LongSupplier clock, UUID bootId, EventLoopGroup ownedGroup,
            DataChannelTls tls, EgressAccount egressAccount) throws IOException {
        this.ownedGroup = ownedGroup;
        this.nicEgress = NicEgress.of(dataBind.getAddress(), Objects.requireNonNull(egressAccount, "egressAccount"));
        this.counters = new SourceCounters();
        this.grants = new GrantTable(config, clock, counters);
        this.egress = new CountBytesWindow("source egress", Integer.MAX_VALUE, config.sourceEgressInFlightBytesMax());
        this.listener = DataListener.bind(dataBind, group, serverChannel, config, grants, egress, counters,
                tls == null ? null : TlsContexts.server(tls), DataListener.WARN, nicEgress);
        this.dataEndpoint = advertised != null ? advertised
                : new Endpoint(dataBind.getHostString(), listener.boundAddress().getPort());
        this.load = new LoadMeter(grants::outstanding, grants::pinnedBytesHeld, egress::bytes, clock);
        this.service = new AuthorizationService(cluster, self, membership, () -> state, config, grants, payloads,
                counters, () -> dataEndpoint, bootId, load);
        this.bindable = service.bindable();
        listener.authorizer(service::authorize); // issue 37 item 5: AUTHORIZE frames get the gRPC call's decision
        this.sweep = group.next().scheduleAtFixedRate(this::sweep, config.expirySweepIntervalMs(),
                config.expirySweepIntervalMs(), TimeUnit.MILLISECONDS);
    }

    public static TransferSource start(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind, Endpoint advertised,
            TransferTransport transport, LongSupplier monotonicNanos) throws IOException {
        return start(payloads, cluster, self, membership, config, dataBind, advertised, transport, monotonicNanos, null);
    }

    /** As above; {@code tls} non-null runs the data listener over TLS (issue 33). */
    public static TransferSource start(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind, Endpoint advertised,
            TransferTransport transport, LongSupplier monotonicNanos, DataChannelTls tls) throws IOException {
        return start(payloads, cluster, self, membership, config, dataBind, advertised, transport, monotonicNanos, tls,
                EgressAccount.NONE);
    }

    /** As above; every send is also charged to {@code egressAccount} on the listener's NIC (issue 39 item 2). */
    public static TransferSource start(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind, Endpoint advertised,
            TransferTransport transport, LongSupplier monotonicNanos, DataChannelTls tls, EgressAccount egressAccount)
            throws IOException {
        if (dataBind.getAddress() != null && dataBind.getAddress().isAnyLocalAddress()) {
            throw new IllegalArgumentException("the transfer data listener must bind a specific address (it is named"
                    + " in grants), got the wildcard " + dataBind);
        }
        Objects.requireNonNull(config);
        EventLoopGroup group = EventLoops.newGroup(Objects.requireNonNull(transport), config.sourceEventLoopThreads(),
                "orbitkv-transfer-source");
        try {
            return new Source(Objects.requireNonNull(payloads), Objects.requireNonNull(cluster),
                    Objects.requireNonNull(self), Objects.requireNonNull(membership), config, dataBind, advertised, group,
                    EventLoops.serverChannel(transport), monotonicNanos, HostIdentity.bootId(), group, tls,
                    egressAccount);
        } catch (IOException | RuntimeException e) {
            EventLoops.shutdown(group);
            throw e;
        }
    }

    /** For tests: from now on AUTHORIZE frames are refused MALFORMED, as by a source without them (issue 37 item 5). */
    public void refuseDataAuthorizeForTest() {
        listener.authorizer(null);
    }

    /**
     * For tests: a source that advertises {@code advertised} (a fault-injecting proxy in front of the listener)
     * and claims {@code bootId} (another host's, to test the TCP fallback).
     */
    public static Source startForTest(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind, Endpoint advertised,
            EventLoopGroup group, Class<? extends ServerChannel> serverChannel, LongSupplier clock, UUID bootId)
            throws IOException {
        return startForTest(payloads, cluster, self, membership, config, dataBind, advertised, group, serverChannel,
                clock, bootId, null);
    }

    /** As above, with TLS on the data listener when {@code tls} is non-null. */
    public static Source startForTest(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind, Endpoint advertised,
            EventLoopGroup group, Class<? extends ServerChannel> serverChannel, LongSupplier clock, UUID bootId,
            DataChannelTls tls) throws IOException {
        return startForTest(payloads, cluster, self, membership, config, dataBind, advertised, group, serverChannel,
                clock, bootId, tls, EgressAccount.NONE);
    }

    /** As above, every send also charged to {@code egressAccount} on the listener's NIC (issue 39 item 2). */
    public static Source startForTest(PayloadSource payloads, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, TransferConfig config, InetSocketAddress dataBind, Endpoint advertised,
            EventLoopGroup group, Class<? extends ServerChannel> serverChannel, LongSupplier clock, UUID bootId,
            DataChannelTls tls, EgressAccount egressAccount) throws IOException {
        return new Source(payloads, cluster, self, membership, config, dataBind, advertised, group, serverChannel,
                clock, bootId, null, tls, egressAccount);
    }

    /** The expiry sweep's tick: ends expired grants, then samples the load gauges (ROUTE-9). */
    private void sweep() {
        grants.sweepExpired();
        load.sample();
    }

    @Override
    public BindableService authorizationService() {
        return bindable;
    }

    @Override
    public Endpoint dataEndpoint() {
        return dataEndpoint;
    }

    @Override
    public String egressNic() {
        return nicEgress.nic();
    }

    /** The listener's bound address (differs from {@link #dataEndpoint()} only behind a test proxy). */
    public InetSocketAddress boundDataAddress() {
        return listener.boundAddress();
    }

    AuthorizationService service() {
        return service;
    }

    GrantTable grants() {
        return grants;
    }

    @Override
    public void onMembership(MembershipView view) {
        grants.exclude(view);
    }

    @Override
    public void fence() {
        state = AuthorizeCheck.SourceState.FENCED;
        grants.endAll(GrantEnd.FENCED, true);
    }

    @Override
    public TransferSourceStatus status() {
        return new TransferSourceStatus(grants.outstanding(), grants.pinsHeld(), grants.pinnedBytesHeld(),
                grants.prefetchPinnedBytesHeld(), counters.grantsIssued.get(), counters.grantsEnded.snapshot(),
                counters.refusals.snapshot(), counters.dataRefusals.snapshot(), counters.readsServed.snapshot(),
                counters.bytesServed.snapshot(), egress.bytes(), counters.dataConnections.get(),
                counters.sendsCut.snapshot(), counters.dataConnectionRefusals.snapshot(),
                counters.dataConnectionTimeouts.snapshot(), counters.dataReadPauses.snapshot(),
                counters.dataAcceptFailures.get());
    }

    @Override
    public void close() {
        if (state != AuthorizeCheck.SourceState.FENCED) {
            state = AuthorizeCheck.SourceState.CLOSED;
        }
        sweep.cancel(false);
        grants.endAll(GrantEnd.CLOSED, true);
        listener.close();
        if (ownedGroup != null) {
            EventLoops.shutdown(ownedGroup);
        }
    }
}
