package orbitkv.server.restore;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import orbitkv.inventory.Medium;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.TransferPorts;
import orbitkv.server.tier.InPlace;
import orbitkv.server.tier.LocalTiers;
import orbitkv.transfer.PayloadSource.CopyOutcome;
import orbitkv.transfer.PayloadSource.PinResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A local route: each block pinned at exactly the planned generation and CRC32C-verified now, one pin at a time; the
 * READ is then already complete (INV-2: the tier is the source and validates the generation). A DRAM block is
 * verified in the arena and its record sends it from there, holding the pin until the record was written or dropped
 * (no copy); an SSD block is copied into its record and unpinned. A broken block was evicted by the tier: it is
 * refused as not resident (the replan tries the other medium or a peer) and named in the stop.
 */
final class LocalRoutePort {
    private static final Logger LOG = LoggerFactory.getLogger(LocalRoutePort.class);

    private final LocalTiers tiers;
    private final RestoreNotes notes;

    LocalRoutePort(LocalTiers tiers, RestoreNotes notes) {
        this.tiers = tiers;
        this.notes = notes;
    }

    TransferPorts.GrantOutcome<RestoreRecords> authorize(Route route, RestoreRecords dst) {
        Medium medium = route.source().medium();
        for (int b = 0; b < route.blocks().size(); b++) {
            RouteBlock block = route.blocks().get(b);
            AdmissionRefusal refusal = switch (tiers.pin(block.key(), medium, block.sequence())) {
                case PinResult.Pinned pin -> fill(dst, b, pin, medium);
                case PinResult.StaleGeneration s -> AdmissionRefusal.STALE_GENERATION;
                case PinResult.NotResident n -> AdmissionRefusal.NOT_RESIDENT;
                case PinResult.PinLimit l -> AdmissionRefusal.PINS_EXHAUSTED;
                case PinResult.Closed c -> AdmissionRefusal.SOURCE_FENCED;
            };
            if (refusal == null) {
                continue;
            }
            notes.refusal(refusal.traceName());
            return new TransferPorts.GrantOutcome.Refused<>(refusal, List.of(block.key()), "local " + medium + ": "
                    + refusal.traceName());
        }
        return new TransferPorts.GrantOutcome.Granted<>(new TransferPorts.SourceGrant<>() {
            @Override
            public TransferPorts.ReadSubmission read(RestoreRecords destination) {
                destination.ready();
                return submission(CompletableFuture.completedFuture(new TransferPorts.ReadyOutcome.Ready()),
                        CompletableFuture.completedFuture(null));
            }

            @Override
            public void release() {
                // copied blocks were unpinned at once; an in-place block's pin belongs to its record
            }
        });
    }

    /**
     * Fills block {@code b} of {@code dst} from {@code pin}: null when filled, else the refusal. The pin is released
     * here unless its bytes were handed to the record to be sent in place (then the record releases it).
     */
    private AdmissionRefusal fill(RestoreRecords dst, int b, PinResult.Pinned pin, Medium medium) {
        boolean handedOver = false;
        try {
            if (pin.sizeBytes() != dst.route.blocks().get(b).sizeBytes()) { // another generation's size: never served
                return AdmissionRefusal.STALE_GENERATION;
            }
            if (RestorePorts.sentInPlace(dst.route)) {
                switch (tiers.verifyInPlace(pin)) {
                    case InPlace.Verified v -> {
                        dst.sendInPlace(b, v.bytes(), pin);
                        handedOver = true;
                        return null;
                    }
                    case InPlace.Corrupt c -> {
                        return corruptStored(c.reason(), c.detail(), medium);
                    }
                    case InPlace.NotInArena n -> throw new IllegalStateException(
                            "a DRAM pin's bytes are always in the arena: " + pin.key());
                }
            }
            return switch (pin.copyTo(dst.payload(b))) {
                case CopyOutcome.Copied c -> {
                    dst.filled(b, null);
                    yield null;
                }
                case CopyOutcome.Corrupt c -> corruptStored(c.reason(), c.detail(), medium);
            };
        } finally {
            if (!handedOver) {
                pin.release();
            }
        }
    }

    private AdmissionRefusal corruptStored(String reason, String detail, Medium medium) {
        LOG.warn("restore: stored block broken and evicted ({}): {}", reason, detail);
        notes.corrupt(reason, medium);
        return AdmissionRefusal.NOT_RESIDENT;
    }

    /** A submitted READ's two terminal events. */
    static TransferPorts.ReadSubmission submission(CompletableFuture<TransferPorts.ReadyOutcome> ready,
            CompletableFuture<Void> drained) {
        return new TransferPorts.ReadSubmission() {
            @Override
            public CompletableFuture<TransferPorts.ReadyOutcome> ready() {
                return ready;
            }

            @Override
            public CompletableFuture<Void> drained() {
                return drained;
            }
        };
    }
}
