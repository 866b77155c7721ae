package orbitkv.server.config;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.membership.MembershipConfig;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.SelectionMode;
import orbitkv.transfer.TransferConfig;

/**
 * The validated settings in each library's own terms: membership's lease timing, the inventory's and the sessions'
 * frames and windows, the index's budgets, transfer's bounds, the planner's policy and the metadata scope. Each
 * library checks its own invariants again; ManagerConfig's one validation place has already checked the relations
 * (a refusal here is a relation missing there).
 */
final class LibraryConfigs {
    private LibraryConfigs() {}

    /**
     * Whatever {@code ManagerConfig.validate} accepts, the consumers accept: their constructors check the same relations.
     * A refusal here is a relation missing from {@code ManagerConfig.validate}, a bug, not an operator error.
     */
    static void consumersAccept(ManagerConfig.Inventory i, ManagerConfig.Index x, ManagerConfig.Lease l,
                                ManagerConfig.Tiers t, ManagerConfig.Transfer tr, ManagerConfig.Route r) {
        try {
            LibraryConfigs.inventoryConfig(i);
            LibraryConfigs.sessionConfig(i, x).requireCompatible(LibraryConfigs.inventoryConfig(i));
            LibraryConfigs.indexConfig(x);
            LibraryConfigs.membershipConfig(l);
            LibraryConfigs.transferConfig(t, tr);
            LibraryConfigs.routePolicy(r);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("a relation is missing from ManagerConfig.validate: " + e.getMessage(), e);
        }
    }

    static RoutePolicy routePolicy(ManagerConfig.Route r) {
        return RoutePolicy.fromManagerOptions(r.alternativesPerBoundaryMax(), r.alternativesPerBatchMax(),
                r.observationsMin(), r.replansMax()).withSelectionMode(r.selection());
    }

    static SelectionMode selection(String text) {
        SelectionMode m = switch (text) {
            case "fixed" -> SelectionMode.FIXED;
            case "shadow" -> SelectionMode.SHADOW;
            case "cost-driven" -> SelectionMode.COST_DRIVEN;
            default -> null;
        };
        SettingRelations.require(m != null, "--route-selection must be fixed, shadow or cost-driven, got '" + text + "'");
        return m;
    }

    static TransferConfig transferConfig(ManagerConfig.Tiers t, ManagerConfig.Transfer x) {
        TransferConfig d = TransferConfig.defaults();
        // the block bound first: every other bound is checked against it
        return d.withWindows(t.blockBytesMax(), Math.max(d.sourceEgressInFlightBytesMax(), t.blockBytesMax()),
                        Math.max(d.receiveInFlightBytesMax(), t.blockBytesMax()), d.readsInFlightMax(),
                        d.connectionsPerSourceMax())
                .withPins(x.pinsPerRequesterMax(), x.pinnedBytesPerRequesterMax(), x.pinsTotalMax(),
                        x.pinnedBytesTotalMax(), Math.min(d.prefetchPinnedBytesTotalMax(), x.pinnedBytesTotalMax()))
                .withWindows(t.blockBytesMax(), x.egressInFlightBytesMax(), x.receiveInFlightBytesMax(),
                        d.readsInFlightMax(), d.connectionsPerSourceMax())
                .withGrantTiming(x.grantExpiryMs(), Math.min(d.expirySweepIntervalMs(), x.grantExpiryMs()),
                        d.grantSafetyMarginMs())
                .withReadsPerConnection(x.readsPerConnectionMax())
                .withDataListener(x.dataConnectionsMax(), x.dataConnectionsPerAddressMax(), x.dataHeaderTimeoutMs(),
                        x.dataIdleTimeoutMs(), x.dataReadsQueuedPerConnectionMax())
                .withDataChannelAuthorize(x.dataChannelAuthorize());
    }

    static MembershipConfig membershipConfig(ManagerConfig.Lease l) {
        MembershipConfig d = MembershipConfig.defaults();
        return new MembershipConfig(l.ttlMs(), l.fenceSafetyMarginMs(), l.renewalIntervalMs(), l.etcdCallTimeoutMs(),
                d.retryBackoffMinMs(), d.retryBackoffMaxMs(), d.memberPageSize());
    }

    static InventoryConfig inventoryConfig(ManagerConfig.Inventory i) {
        return new InventoryConfig(i.journalRetentionBytesMax(), i.journalRetentionRecordsMax(), i.frameInputRecordsMax(),
                i.frameInputBytesMax(), (int) Math.min(Integer.MAX_VALUE, i.frameEncodedBytesMax()),
                (int) Math.min(Integer.MAX_VALUE, i.frameDecodedBytesMax()), i.snapshotPageRecordsMax(),
                i.snapshotPageBytesMax(),
                i.coalescingWindowMs(), i.coalescingWaitMaxMs(), InventoryConfig.DEFAULT_WAITERS_MAX,
                i.coalescingImmediateReadsMax());
    }

    static SessionConfig sessionConfig(ManagerConfig.Inventory i, ManagerConfig.Index x) {
        SessionConfig d = SessionConfig.defaults();
        return new SessionConfig(i.receiveWindowBytes(), d.windowFramesMax(), d.openEncodedBytesMax(),
                (int) Math.min(Integer.MAX_VALUE, i.frameEncodedBytesMax()),
                (int) Math.min(Integer.MAX_VALUE, i.frameDecodedBytesMax()), i.ackPendingProgressMs(), i.idleLivenessMs(),
                x.peerSessionsMax(), i.sourceSessionsMax(), d.reconnectBackoffMinMs(), d.reconnectBackoffMaxMs(),
                d.snapshotRetryBackoffMinMs(), d.snapshotRetryBackoffMaxMs(), d.replayIntervalsPerRead(),
                d.committedViewsMax()).withSendScheduling(i.sourceSendStepsMax(), i.sourceSendPriority(), i.sourcePriorityRequesters());
    }

    /** A comma-separated list of node ids ({@code s} not given: none); a malformed id names the option. */
    static java.util.Set<orbitkv.membership.NodeId> nodeIds(RawValues v, Setting s) {
        java.util.Set<orbitkv.membership.NodeId> ids = new java.util.LinkedHashSet<>();
        if (v.given(s)) {
            for (String part : v.text(s).split(",", -1)) {
                try {
                    ids.add(new orbitkv.membership.NodeId(part.strip()));
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(s.flag() + ": " + e.getMessage());
                }
            }
        }
        return ids;
    }

    static IndexConfig indexConfig(ManagerConfig.Index index) {
        IndexConfig d = IndexConfig.defaults();
        return new IndexConfig(index.indexBudgetBytes(), index.freshnessBudgetMs(), d.lookupKeysMax(), d.lookupBytesMax(),
                d.replicasPerMediumMax(), d.cleanupBatchRowsMax(), d.diagnosticsPageSizeMax());
    }

    static Scope scope(boolean empty, List<String> names) {
        if (empty) {
            return Scope.none();
        }
        if (names.isEmpty()) {
            return Scope.all();
        }
        SettingRelations.require(names.size() <= Scope.MAX_NAMESPACES, "--metadata-namespace is given " + names.size()
                + " times; a scope holds at most " + Scope.MAX_NAMESPACES + " namespaces");
        List<Namespace> namespaces = new ArrayList<>();
        for (String n : names) {
            int bytes = n.getBytes(StandardCharsets.UTF_8).length;
            SettingRelations.require(bytes >= 1 && bytes <= Namespace.MAX_BYTES, "--metadata-namespace must be 1.."
                    + Namespace.MAX_BYTES + " UTF-8 bytes, got " + bytes + " for '" + n + "'");
            namespaces.add(Namespace.utf8(n));
        }
        Scope scope = Scope.of(namespaces);
        int encoded = scope.canonicalEncoding().length;
        SettingRelations.require(encoded <= 64 * 1024, "--metadata-namespace list encodes to " + encoded
                + " bytes; a scope is at most 65536 bytes");
        return scope;
    }
}
