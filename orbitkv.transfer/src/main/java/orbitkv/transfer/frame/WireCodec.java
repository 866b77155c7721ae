package orbitkv.transfer.frame;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.util.UUID;
import orbitkv.inventory.Medium;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.transfer.Intent;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.SourceLoad;
import orbitkv.transfer.wire.IncarnationRef;
import orbitkv.transfer.wire.Uuid;

/**
 * Conversions between contract types and {@code orbitkv.transfer.v1} messages, with the fixed-width checks of
 * the schema: a malformed field throws {@link WireException} naming it and the refusal it deserves.
 */
public final class WireCodec {
    /** The protocol string of every transfer request. */
    public static final String PROTOCOL = "orbitkv/transfer/v1";
    /** Bound on a detail string sent on the wire, in UTF-8 bytes. */
    public static final int DETAIL_BYTES_MAX = 1024;

    private WireCodec() {}

    /** A field that fails the schema's checks. */
    public static final class WireException extends Exception {
        private static final long serialVersionUID = 1L;
        private final RefusalReason reason;

        public WireException(RefusalReason reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }

        public RefusalReason reason() {
            return reason;
        }
    }

    public static Uuid uuid(UUID id) {
        return Uuid.newBuilder().setMsb(id.getMostSignificantBits()).setLsb(id.getLeastSignificantBits()).build();
    }

    public static UUID uuid(String field, boolean present, Uuid u) throws WireException {
        if (!present) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, field + " is missing");
        }
        return new UUID(u.getMsb(), u.getLsb());
    }

    public static IncarnationRef incarnation(Incarnation i) {
        return IncarnationRef.newBuilder().setNodeId(i.nodeId().value()).setNodeEpoch(i.epoch().value())
                .setId(uuid(i.id())).build();
    }

    /** The wire form of a load summary (ROUTE-9). */
    public static orbitkv.transfer.wire.SourceLoad load(SourceLoad l) {
        return orbitkv.transfer.wire.SourceLoad.newBuilder().setMeasuredBy(incarnation(l.measuredBy()))
                .setWindowMs(l.windowMs()).setGrantsOutstanding(l.grantsOutstanding()).setPinnedBytes(l.pinnedBytes())
                .setEgressQueuedBytes(l.egressQueuedBytes()).build();
    }

    /**
     * A checked load summary: {@code measured_by} well formed and of node {@code node} (the one asked), the window
     * 1..{@value SourceLoad#WINDOW_MS_MAX} ms, every figure within its width (a fixed64 above 2^63-1 or a fixed32
     * above 2^31-1 reads negative and is refused, never wrapped).
     */
    public static SourceLoad load(orbitkv.transfer.wire.SourceLoad w, NodeId node) throws WireException {
        Incarnation by = incarnation("load.measured_by", w.hasMeasuredBy(), w.getMeasuredBy());
        if (!by.nodeId().equals(node)) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, "load.measured_by " + by + " is not of node " + node);
        }
        try {
            return new SourceLoad(by, w.getWindowMs(), w.getGrantsOutstanding(), w.getPinnedBytes(),
                    w.getEgressQueuedBytes());
        } catch (IllegalArgumentException e) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, "load: " + e.getMessage());
        }
    }

    public static Incarnation incarnation(String field, boolean present, IncarnationRef r) throws WireException {
        if (!present) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, field + " is missing");
        }
        if (r.getNodeEpoch() < 1) { // fixed64 above 2^63-1 reads negative: an overflow, never wrapped
            throw new WireException(RefusalReason.MALFORMED_REQUEST, field + ".node_epoch must be 1..2^63-1");
        }
        try {
            return new Incarnation(new NodeId(r.getNodeId()), new NodeEpoch(r.getNodeEpoch()),
                    uuid(field + ".id", r.hasId(), r.getId()));
        } catch (IllegalArgumentException e) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, field + ": " + e.getMessage());
        }
    }

    public static orbitkv.transfer.wire.Medium medium(Medium m) {
        return m == Medium.DRAM ? orbitkv.transfer.wire.Medium.MEDIUM_DRAM : orbitkv.transfer.wire.Medium.MEDIUM_SSD;
    }

    public static Medium medium(String field, int value) throws WireException {
        return switch (value) {
            case orbitkv.transfer.wire.Medium.MEDIUM_DRAM_VALUE -> Medium.DRAM;
            case orbitkv.transfer.wire.Medium.MEDIUM_SSD_VALUE -> Medium.SSD;
            default -> throw new WireException(RefusalReason.UNKNOWN_ENUM_VALUE, field + " has unknown value " + value);
        };
    }

    public static orbitkv.transfer.wire.Intent intent(Intent i) {
        return i == Intent.FOREGROUND ? orbitkv.transfer.wire.Intent.INTENT_FOREGROUND
                : orbitkv.transfer.wire.Intent.INTENT_PREFETCH;
    }

    public static Intent intent(String field, int value) throws WireException {
        return switch (value) {
            case orbitkv.transfer.wire.Intent.INTENT_FOREGROUND_VALUE -> Intent.FOREGROUND;
            case orbitkv.transfer.wire.Intent.INTENT_PREFETCH_VALUE -> Intent.PREFETCH;
            default -> throw new WireException(RefusalReason.UNKNOWN_ENUM_VALUE, field + " has unknown value " + value);
        };
    }

    public static orbitkv.transfer.wire.RefusalReason reason(RefusalReason r) {
        return orbitkv.transfer.wire.RefusalReason.valueOf(r.name());
    }

    /** The contract reason of a wire value, or null for zero or an unknown value. */
    public static RefusalReason reason(orbitkv.transfer.wire.RefusalReason r) {
        if (r == orbitkv.transfer.wire.RefusalReason.UNRECOGNIZED
                || r == orbitkv.transfer.wire.RefusalReason.REFUSAL_REASON_UNSPECIFIED) {
            return null;
        }
        return RefusalReason.valueOf(r.name());
    }

    public static ByteString bootId(UUID id) {
        if (id == null) {
            return ByteString.EMPTY;
        }
        return ByteString.copyFrom(ByteBuffer.allocate(16).putLong(id.getMostSignificantBits())
                .putLong(id.getLeastSignificantBits()).flip());
    }

    /** Null for an empty field. */
    public static UUID bootId(String field, ByteString bytes) throws WireException {
        if (bytes.isEmpty()) {
            return null;
        }
        if (bytes.size() != 16) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, field + " must be empty or 16 bytes, got " + bytes.size());
        }
        ByteBuffer b = bytes.asReadOnlyByteBuffer();
        return new UUID(b.getLong(), b.getLong());
    }

    /** {@code detail} cut to {@link #DETAIL_BYTES_MAX} UTF-8 bytes (on a character boundary). */
    public static String detail(String detail) {
        if (detail.length() * 3 <= DETAIL_BYTES_MAX) {
            return detail;
        }
        StringBuilder sb = new StringBuilder();
        int bytes = 0;
        for (int i = 0; i < detail.length(); ) {
            int cp = detail.codePointAt(i);
            int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + n > DETAIL_BYTES_MAX) {
                break;
            }
            sb.appendCodePoint(cp);
            bytes += n;
            i += Character.charCount(cp);
        }
        return sb.toString();
    }
}
