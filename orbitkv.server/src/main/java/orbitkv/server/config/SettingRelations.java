package orbitkv.server.config;

import orbitkv.transfer.TransferConfig;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.SessionConfig;

/**
 * The relations between settings (BND-6), one group per concern: tiers and block size, HTTP bodies and tokens, the
 * inventory's frames and windows, the lease timing. {@link ManagerConfig}'s one validation place calls every group;
 * each message names both options as typed, with their values.
 */
final class SettingRelations {
    private SettingRelations() {}

    static void tiers(ManagerConfig.Tiers t, ManagerConfig.Http h) {
        // issue 35 item 1: the ceiling first, every other relation is stated against the block size
        require(t.blockBytesMax() <= ManagerConfig.BLOCK_BYTES_CEILING, "--block-bytes-max (" + t.blockBytesMax()
                + ") must not exceed " + ManagerConfig.BLOCK_BYTES_CEILING + " bytes (128 MiB): the largest block size tested end to end");
        require(t.blockBytesMax() <= t.dramBytes(), "--block-bytes-max (" + t.blockBytesMax()
                + ") must not exceed --dram (" + t.dramBytes() + "): every block must fit the DRAM tier");
        require(t.blockBytesMax() + ManagerConfig.RECORD_FRAMING_BYTES_MAX <= h.saveBodyBytesMax(), "--save-body-bytes-max ("
                + h.saveBodyBytesMax() + ") must hold one record of --block-bytes-max (" + t.blockBytesMax()
                + ") plus " + ManagerConfig.RECORD_FRAMING_BYTES_MAX + " framing bytes");
        require(t.blockBytesMax() + ManagerConfig.RECORD_FRAMING_BYTES_MAX <= t.restoreBytesInFlightMax(), "--restore-bytes-in-flight-max ("
                + t.restoreBytesInFlightMax() + ") must hold one record of --block-bytes-max (" + t.blockBytesMax()
                + ") plus " + ManagerConfig.RECORD_FRAMING_BYTES_MAX + " framing bytes");
        require(t.blockBytesMax() <= t.dramPinnedBytesMax(), "--dram-pinned-bytes-max (" + t.dramPinnedBytesMax()
                + ") must be at least --block-bytes-max (" + t.blockBytesMax() + "): one block must be readable");
        if (t.hasSsd()) {
            require(t.blockBytesMax() <= t.ssdPinnedBytesMax(), "--ssd-pinned-bytes-max (" + t.ssdPinnedBytesMax()
                    + ") must be at least --block-bytes-max (" + t.blockBytesMax() + "): one block must be readable");
            require(t.blockBytesMax() <= t.ssdBytes(), "--block-bytes-max (" + t.blockBytesMax()
                    + ") must not exceed --ssd (" + t.ssdBytes() + ")");
            require(t.blockBytesMax() <= t.ssdQueueBytesMax(), "--ssd-queue-bytes-max (" + t.ssdQueueBytesMax()
                    + ") must be at least --block-bytes-max (" + t.blockBytesMax() + ")");
        }
    }

    static void http(ManagerConfig.Http h) {
        require(h.saveBodyBytesMax() <= h.bodyBytesInFlightMax(), "--http-body-bytes-in-flight-max ("
                + h.bodyBytesInFlightMax() + ") must be at least --save-body-bytes-max (" + h.saveBodyBytesMax()
                + "): a save of the largest allowed body could never be admitted");
        require(h.jsonBodyBytesMax() <= h.bodyBytesInFlightMax(), "--http-body-bytes-in-flight-max ("
                + h.bodyBytesInFlightMax() + ") must be at least --json-body-bytes-max (" + h.jsonBodyBytesMax() + ")");
        // issue 33: a client's share (capped at the whole) must admit the largest save
        require(h.saveBodyBytesMax() <= h.bodyBytesInFlightPerClientMax(), "--http-body-bytes-in-flight-per-client-max ("
                + h.bodyBytesInFlightPerClientMax() + ") must be at least --save-body-bytes-max (" + h.saveBodyBytesMax()
                + "): a save of the largest allowed body could never be admitted");
        // issue 33: a read token without a write token would protect reads while anyone may save and evict
        require(h.readToken().isEmpty() || h.token().isPresent(), "--http-read-token-file requires --http-token-file:"
                + " with a read token but no write token anyone could save and evict while reads need a token");
        require(h.readToken().isEmpty() || !h.readToken().get().sameSecret(h.token().get()),
                "--http-read-token-file and --http-token-file must hold different tokens: a reader would be able to write");
    }

    static void inventory(ManagerConfig.Inventory i, ManagerConfig.Index x) {
        require(i.coalescingWindowMs() <= i.coalescingWaitMaxMs(), "--coalescing-window-ms ("
                + i.coalescingWindowMs() + ") must not exceed --coalescing-wait-max-ms (" + i.coalescingWaitMaxMs() + ")");
        require(i.frameEncodedBytesMax() >= SessionConfig.FRAME_ENCODED_BYTES_MIN, "--frame-encoded-bytes-max ("
                + i.frameEncodedBytesMax() + ") must be at least " + SessionConfig.FRAME_ENCODED_BYTES_MIN
                + " bytes: a session must carry one largest record and its control frames");
        require(i.frameEncodedBytesMax() <= i.frameDecodedBytesMax(), "--frame-encoded-bytes-max ("
                + i.frameEncodedBytesMax() + ") must not exceed --frame-decoded-bytes-max (" + i.frameDecodedBytesMax() + ")");
        require(i.snapshotPageBytesMax() <= i.frameEncodedBytesMax() - InventoryConfig.PAGE_FRAME_OVERHEAD_BYTES,
                "--snapshot-page-bytes-max (" + i.snapshotPageBytesMax() + ") must not exceed --frame-encoded-bytes-max ("
                + i.frameEncodedBytesMax() + ") minus " + InventoryConfig.PAGE_FRAME_OVERHEAD_BYTES
                + " frame overhead bytes: a page is sent as one frame");
        require(i.frameDecodedBytesMax() <= Integer.MAX_VALUE, "--frame-decoded-bytes-max ("
                + i.frameDecodedBytesMax() + ") must not exceed " + Integer.MAX_VALUE + " bytes");
        require(i.frameEncodedBytesMax() <= i.receiveWindowBytes(), "--receive-window-bytes ("
                + i.receiveWindowBytes() + ") must be at least --frame-encoded-bytes-max (" + i.frameEncodedBytesMax()
                + "): one frame must fit the credit window");
        require(i.frameInputBytesMax() >= InventoryConfig.JOURNAL_ENTRY_BYTES_MAX, "--frame-input-bytes-max ("
                + i.frameInputBytesMax() + ") must be at least " + InventoryConfig.JOURNAL_ENTRY_BYTES_MAX
                + " bytes: one largest journal entry");
        require(i.frameInputBytesMax() <= i.journalRetentionBytesMax(), "--journal-retention-bytes-max ("
                + i.journalRetentionBytesMax() + ") must be at least --frame-input-bytes-max (" + i.frameInputBytesMax() + ")");
        require(i.ackPendingProgressMs() <= i.idleLivenessMs(), "--idle-liveness-ms (" + i.idleLivenessMs()
                + ") must be at least --ack-pending-progress-ms (" + i.ackPendingProgressMs() + ")");
        require(i.idleLivenessMs() < x.freshnessBudgetMs(), "--idle-liveness-ms (" + i.idleLivenessMs()
                + ") must be less than --freshness-budget-ms (" + x.freshnessBudgetMs()
                + "): idle owners would turn stale between liveness frames");
        require(i.sourcePriorityRequesters().size() <= i.sourceSessionsMax(), "--source-priority-requesters names "
                + i.sourcePriorityRequesters().size() + " node ids, more than --source-sessions-max (" + i.sourceSessionsMax()
                + ") sessions this source serves"); // issue 39 item 5 (ROUTE-10)
    }

    static void lease(ManagerConfig.Lease l) {
        require(l.ttlMs() % 1000 == 0, "--lease-ttl-ms must be a whole number of seconds in 2000..3600000, got "
                + l.ttlMs());
        require(l.fenceSafetyMarginMs() < l.ttlMs(), "--fence-safety-margin-ms (" + l.fenceSafetyMarginMs()
                + ") must be less than --lease-ttl-ms (" + l.ttlMs() + ")");
        long window = l.ttlMs() - l.fenceSafetyMarginMs();
        require(l.renewalIntervalMs() < window, "--renewal-interval-ms (" + l.renewalIntervalMs()
                + ") must be less than --lease-ttl-ms minus --fence-safety-margin-ms (" + window
                + "): a renewal must be confirmed before the local fence falls");
        require(l.etcdCallTimeoutMs() < window, "--etcd-call-timeout-ms (" + l.etcdCallTimeoutMs()
                + ") must be less than --lease-ttl-ms minus --fence-safety-margin-ms (" + window
                + "): an etcd call must time out before the local fence falls");
    }

    /** A broken relation: the message names both sides. */
    static void require(boolean ok, String message) {
        if (!ok) {
            throw new ConfigException(message);
        }
    }

    /** Relations of the transfer settings (BND-6), in the option names as typed. */
    static void transfer(ManagerConfig.Tiers t, ManagerConfig.Transfer x) {
        require(t.blockBytesMax() <= Integer.MAX_VALUE, "--block-bytes-max (" + t.blockBytesMax()
                + ") must not exceed " + Integer.MAX_VALUE + " bytes: a peer READ fills one buffer per block");
        require(t.blockBytesMax() <= x.pinnedBytesPerRequesterMax(), "--transfer-pinned-bytes-per-requester-max ("
                + x.pinnedBytesPerRequesterMax() + ") must be at least --block-bytes-max (" + t.blockBytesMax()
                + "): one block must be grantable");
        require(x.pinsPerRequesterMax() <= x.pinsTotalMax(), "--transfer-pins-total-max (" + x.pinsTotalMax()
                + ") must be at least --transfer-pins-per-requester-max (" + x.pinsPerRequesterMax() + ")");
        require(x.pinnedBytesPerRequesterMax() <= x.pinnedBytesTotalMax(), "--transfer-pinned-bytes-total-max ("
                + x.pinnedBytesTotalMax() + ") must be at least --transfer-pinned-bytes-per-requester-max ("
                + x.pinnedBytesPerRequesterMax() + ")");
        require(x.grantExpiryMs() > TransferConfig.DEFAULT_GRANT_SAFETY_MARGIN_MS, "--transfer-grant-expiry-ms ("
                + x.grantExpiryMs() + ") must be more than the requester's grant safety margin ("
                + TransferConfig.DEFAULT_GRANT_SAFETY_MARGIN_MS + " ms): no READ could start before a grant ends");
        require(t.blockBytesMax() <= x.egressInFlightBytesMax(), "--transfer-egress-in-flight-bytes-max ("
                + x.egressInFlightBytesMax() + ") must be at least --block-bytes-max (" + t.blockBytesMax()
                + "): one block must fit the egress window");
        require(t.blockBytesMax() <= x.receiveInFlightBytesMax(), "--transfer-receive-in-flight-bytes-max ("
                + x.receiveInFlightBytesMax() + ") must be at least --block-bytes-max (" + t.blockBytesMax()
                + "): one block must fit the receive window");
        // issue 33: data listener bounds
        require(x.dataConnectionsPerAddressMax() <= x.dataConnectionsMax(),
                "--transfer-data-connections-per-address-max (" + x.dataConnectionsPerAddressMax()
                + ") must not exceed --transfer-data-connections-max (" + x.dataConnectionsMax() + ")");
        require(x.readsPerConnectionMax() <= x.dataReadsQueuedPerConnectionMax(),
                "--transfer-data-reads-queued-per-connection-max (" + x.dataReadsQueuedPerConnectionMax()
                + ") must be at least --transfer-reads-per-connection-max (" + x.readsPerConnectionMax()
                + "): a requester's whole pipeline must be read without pausing");
        // issue 34: restore
        long routeReadsMax = (long) x.readsPerConnectionMax() * TransferConfig.DEFAULT_CONNECTIONS_PER_SOURCE_MAX;
        require(x.restoreRouteReadsInFlightMax() <= routeReadsMax, "--restore-route-reads-in-flight-max ("
                + x.restoreRouteReadsInFlightMax() + ") must not exceed --transfer-reads-per-connection-max ("
                + x.readsPerConnectionMax() + ") times the " + TransferConfig.DEFAULT_CONNECTIONS_PER_SOURCE_MAX
                + " data connections to one source: a route's READs beyond them would be refused (connections)");
    }

    /** issue 39: relations of the node-local admission window (ROUTE-11) with the block and the lease batch. */
    static void admission(ManagerConfig.Tiers t, ManagerConfig.Transfer x, AdmissionOptions a) {
        if (!a.enabled()) {
            return;
        }
        long usable = a.usableBytes();
        require(a.leaseBatchBytesMax() <= usable, "--admission-lease-batch-bytes-max (" + a.leaseBatchBytesMax()
                + ") must not exceed the usable --admission-window-bytes-max (" + a.windowBytesMax() + " minus "
                + a.reservePercent() + " % --admission-reserve-percent = " + usable + ")");
        // a peer route's READs are charged one by one (PeerReads): the window must hold the largest one
        require(t.blockBytesMax() <= usable, "the usable --admission-window-bytes-max (" + a.windowBytesMax() + " minus "
                + a.reservePercent() + " % --admission-reserve-percent = " + usable + ") must hold one READ of"
                + " --block-bytes-max (" + t.blockBytesMax() + "): peer restore READs are charged one by one");
        a.nicPaces().forEach((nic, pace) -> require(pace == 0 || pace - Math.ceilDiv(pace * a.reservePercent(), 100L) >= 1,
                "--admission-nics: the rate of " + nic + " (" + pace + " bytes/s) leaves nothing beside"
                + " --admission-reserve-percent (" + a.reservePercent() + ")"));
    }
}
