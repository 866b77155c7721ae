package orbitkv.inventory.session;

import com.google.protobuf.ByteString;
import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.IncarnationRef;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;

/**
 * Field validation of one inbound frame (SES-9) without exceptions: every read checks its field and keeps
 * the first {@link Refusal}; after a refusal, reads return harmless placeholders (0, the nil UUID, zero
 * bytes) that the caller never uses, because it asks {@link #refusal()} before acting on any value.
 * One instance per frame, on the thread handling it.
 */
final class FrameCheck {
    private static final UUID NIL = new UUID(0, 0);
    private Refusal first;

    /** Records a refusal unless one is already recorded; returns this check. */
    FrameCheck refuse(ErrorCause cause, String detail) {
        if (first == null) {
            first = new Refusal(cause, detail);
        }
        return this;
    }

    /** The first refusal, if any field failed. */
    Optional<Refusal> refusal() {
        return Optional.ofNullable(first);
    }

    boolean ok() {
        return first == null;
    }

    /** A uint64 field that Java reads as a signed long: above 2^63-1 is an overflow (SES-9). */
    long nonNegative(String field, long v) {
        if (v < 0) {
            refuse(ErrorCause.INTEGER_OVERFLOW, field + " exceeds 2^63-1");
            return 0;
        }
        return v;
    }

    UUID uuid(String field, boolean present, Uuid u) {
        if (!present) {
            refuse(ErrorCause.MALFORMED_FRAME, field + " is missing");
            return NIL;
        }
        return Wire.uuid(u);
    }

    /** A scope digest field (SHA-256, SES-7): exactly {@value Wire#DIGEST_BYTES} bytes. */
    byte[] digest(String field, ByteString b) {
        if (b.size() != Wire.DIGEST_BYTES) {
            refuse(ErrorCause.MALFORMED_FRAME, field + " must be " + Wire.DIGEST_BYTES + " bytes, got " + b.size());
            return new byte[Wire.DIGEST_BYTES];
        }
        return b.toByteArray();
    }

    /** A transcript digest field: exactly {@link orbitkv.inventory.TranscriptDigest#BYTES} bytes (SES-9 fixed widths). */
    byte[] transcriptDigest(String field, ByteString b) {
        int width = orbitkv.inventory.TranscriptDigest.BYTES;
        if (b.size() != width) {
            refuse(ErrorCause.MALFORMED_FRAME, field + " must be " + width + " bytes, got " + b.size());
            return new byte[width];
        }
        return b.toByteArray();
    }

    /** An incarnation reference, or empty after a refusal. */
    Optional<Incarnation> incarnation(String field, boolean present, IncarnationRef r) {
        if (!present || !r.hasId()) {
            refuse(ErrorCause.MALFORMED_FRAME, field + " is missing");
            return Optional.empty();
        }
        if (r.getNodeEpoch() < 0) {
            refuse(ErrorCause.INTEGER_OVERFLOW, field + ".node_epoch exceeds 2^63-1");
            return Optional.empty();
        }
        try { // the membership records validate themselves; their refusal becomes this frame's
            return Optional.of(new Incarnation(new NodeId(r.getNodeId()), new NodeEpoch(r.getNodeEpoch()), Wire.uuid(r.getId())));
        } catch (IllegalArgumentException e) {
            refuse(ErrorCause.MALFORMED_FRAME, field + ": " + e.getMessage());
            return Optional.empty();
        }
    }
}
