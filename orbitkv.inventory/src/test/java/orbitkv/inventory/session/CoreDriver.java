package orbitkv.inventory.session;

import java.util.List;
import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.codec.SourceFrameEncoder;
import orbitkv.inventory.wire.OpenAccepted;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;

/**
 * A {@link RequesterCore} driven by a test without threads, sockets or clocks (issue 38): the test passes virtual
 * time into every step and reads the effects back, so every timer assertion is exact and deterministic.
 */
final class CoreDriver {
    final Incarnation source = new Incarnation(new NodeId("src"), new NodeEpoch(1), new UUID(38, 1));
    final Incarnation self = new Incarnation(new NodeId("req"), new NodeEpoch(1), new UUID(38, 2));
    final ClockedSessions.Recorder receiver = new ClockedSessions.Recorder();
    final RequesterCore core;
    final UUID view = new UUID(38, 3);
    UUID stream;
    long now = ClockedSessions.ORIGIN_NANOS;

    CoreDriver(SessionConfig config) {
        MembershipView admitsAll = new AdmitAll();
        core = new RequesterCore(new RequesterCore.Peer(ClockedSessions.CLUSTER, self, source, Scope.all(), config, receiver,
                new RequesterCounters(), () -> admitsAll));
    }

    /** Opens a stream resuming an installed view at cursor 7 and delivers the source's resumed OpenAccepted. */
    void resumed() {
        receiver.install(new InstalledCursor(view, 7));
        stream = UUID.randomUUID();
        List<RequesterCore.Effect> open = core.connect(now, stream, receiver.installedCursor(source), true);
        if (open.size() != 1) {
            throw new AssertionError("one Open expected, got " + open);
        }
        SourceFrame accepted = SourceFrame.newBuilder().setSessionId(Wire.uuid(stream)).setFrameNumber(1)
                .setAccepted(OpenAccepted.newBuilder().setMode(OpenMode.OPEN_MODE_RESUMED).setSourceHead(7).setWindowBytes(1 << 20))
                .build();
        core.onFrame(stream, now, new Inbound.Parsed<>(accepted, accepted.getSerializedSize()));
        if (!(core.state() instanceof RequesterState.Streaming)) {
            throw new AssertionError("streaming expected, got " + core.state());
        }
    }

    /** Delta frame {@code n} of {@code (from, to]} with one put, through the real encoder and parser. */
    Inbound<SourceFrame> delta(long n, long from, long to) {
        ResidenceRecord r = ResidenceRecord.put(new StateKey(Namespace.utf8("clock"), new byte[] {1}), Medium.DRAM, to, 10);
        byte[] bytes = SourceFrameEncoder.delta(stream, new Interval(from, to), List.of(r)).number(n).toByteArray();
        try {
            return new Inbound.Parsed<>(SourceFrame.parseFrom(bytes), bytes.length);
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    static final class AdmitAll implements MembershipView {
        @Override
        public ClusterIdentity cluster() {
            return ClockedSessions.CLUSTER;
        }

        @Override
        public long revision() {
            return 1;
        }

        @Override
        public boolean valid() {
            return true;
        }

        @Override
        public java.util.Collection<orbitkv.membership.Member> members() {
            return List.of();
        }

        @Override
        public Optional<orbitkv.membership.Member> member(NodeId nodeId) {
            return Optional.empty();
        }

        @Override
        public boolean isAdmitted(Incarnation incarnation) {
            return true;
        }
    }
}
