package orbitkv.inventory.session;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import orbitkv.inventory.wire.Error;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.IncarnationRef;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.Incarnation;

/** Fixed-width conversions between the v4 wire and the contract types (SES-9). */
final class Wire {
    /** Error.detail bound in UTF-8 bytes (docs/protocol.md). */
    static final int ERROR_DETAIL_BYTES_MAX = 1024;
    static final int DIGEST_BYTES = 32;

    private Wire() {}

    static Uuid uuid(UUID u) {
        return Uuid.newBuilder().setMsb(u.getMostSignificantBits()).setLsb(u.getLeastSignificantBits()).build();
    }

    static UUID uuid(Uuid u) {
        return new UUID(u.getMsb(), u.getLsb());
    }

    static IncarnationRef ref(Incarnation i) {
        return IncarnationRef.newBuilder().setNodeId(i.nodeId().value()).setNodeEpoch(i.epoch().value())
                .setId(uuid(i.id())).build();
    }

    /**
     * Bytes of an Error frame besides its detail: session id, frame number, body and field framing (38 for a
     * 448-byte detail in {@code SessionFrameFloorTest}; at most a few more for longer varints), rounded up.
     */
    static final int ERROR_FRAME_OVERHEAD_BYTES = 64;

    /** An Error body with the detail truncated to its bound at a character boundary. */
    static Error error(ErrorCause cause, String detail) {
        return error(cause, detail, Integer.MAX_VALUE);
    }

    /**
     * An Error body whose frame also fits {@code frameBytesMax} (SES-10: the peer checks every inbound frame,
     * control frames included): the detail is cut to the smaller of its own bound and what the frame leaves.
     */
    static Error error(ErrorCause cause, String detail, int frameBytesMax) {
        int detailMax = Math.max(0, Math.min(ERROR_DETAIL_BYTES_MAX, frameBytesMax - ERROR_FRAME_OVERHEAD_BYTES));
        String d = detail == null ? "" : detail;
        byte[] utf8 = d.getBytes(StandardCharsets.UTF_8);
        if (utf8.length > detailMax) {
            int end = detailMax;
            while (end > 0 && (utf8[end] & 0xC0) == 0x80) {
                end--;
            }
            d = new String(utf8, 0, end, StandardCharsets.UTF_8);
        }
        return Error.newBuilder().setCause(cause).setDetail(d).build();
    }

    /** The wire cause named by a receiver refusal ({@code RejectReason#wireCause}). */
    static ErrorCause cause(String wireName) {
        try {
            return ErrorCause.valueOf(wireName);
        } catch (IllegalArgumentException e) {
            return ErrorCause.INTERNAL;
        }
    }

    /** The wire form of a requester scope (SES-7, SES-8). */
    static orbitkv.inventory.wire.ScopeSpec scopeSpec(orbitkv.inventory.Scope scope) {
        if (scope instanceof orbitkv.inventory.Scope.NamespaceList list) {
            orbitkv.inventory.wire.NamespaceList.Builder b = orbitkv.inventory.wire.NamespaceList.newBuilder();
            list.namespaces().forEach(ns -> b.addNamespaces(com.google.protobuf.ByteString.copyFrom(ns.bytes())));
            return orbitkv.inventory.wire.ScopeSpec.newBuilder().setList(b).build();
        }
        return orbitkv.inventory.wire.ScopeSpec.newBuilder().setAll(orbitkv.inventory.wire.AllNamespaces.getDefaultInstance()).build();
    }
}
