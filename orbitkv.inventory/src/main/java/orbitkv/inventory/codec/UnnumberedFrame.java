package orbitkv.inventory.codec;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;
import orbitkv.inventory.wire.SourceFrame;

/**
 * An encoded {@code SourceFrame} whose frame number is not yet assigned (SES-12, SES-13): its exact encoded
 * size is known before numbering (the credit ledger charges it), and {@link #number} writes the number
 * once, under the session's send lock, by patching the 8 little-endian bytes of the fixed64
 * {@code frame_number} (SES-9 fixed width: the size never depends on the number).
 *
 * <p>Offset rule: a source frame starts with {@code session_id} (field 1: one tag byte, one length byte,
 * then the Uuid body of 0, 9 or 18 bytes, since a zero half is omitted) followed by the
 * {@code frame_number} tag (one byte), so the number's bytes start at {@code 3 + sessionIdBodyBytes}
 * ({@link #frameNumberOffset(int)}). A frame number of 0 would be omitted by the generated code and move
 * everything after it; frames start at 1, so {@link #number} refuses 0 and negative values.
 *
 * <p>Not thread-safe: owned by the one thread that numbers and sends it; numbered at most once.
 */
public final class UnnumberedFrame {
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** Tag byte of field 2, wire type fixed64. */
    static final byte FRAME_NUMBER_TAG = (SourceFrameEncoder.FRAME_NUMBER << 3) | 1;

    private final byte[] bytes;
    private final int frameNumberOffset;
    private final SourceFrame.BodyCase body;
    private boolean numbered;

    UnnumberedFrame(byte[] bytes, int frameNumberOffset, SourceFrame.BodyCase body) {
        this.bytes = bytes;
        this.frameNumberOffset = frameNumberOffset;
        this.body = Objects.requireNonNull(body, "body must not be null");
        if (frameNumberOffset < 3 || frameNumberOffset + Long.BYTES > bytes.length
                || bytes[frameNumberOffset - 1] != FRAME_NUMBER_TAG) {
            throw new IllegalArgumentException("no fixed64 frame_number at offset " + frameNumberOffset + " of a "
                    + bytes.length + "-byte frame");
        }
    }

    /** Where the frame number's 8 bytes start, given the encoded size of the session id's Uuid body. */
    public static int frameNumberOffset(int sessionIdBodyBytes) {
        if (sessionIdBodyBytes != 0 && sessionIdBodyBytes != 9 && sessionIdBodyBytes != 18) {
            throw new IllegalArgumentException("a Uuid body is 0, 9 or 18 bytes, got " + sessionIdBodyBytes);
        }
        return 3 + sessionIdBodyBytes;
    }

    /**
     * A control or commit frame built by the generated classes, to be numbered like a data frame. It must
     * carry a session id and a non-zero placeholder frame number (so the field is present).
     */
    public static UnnumberedFrame of(SourceFrame frame) {
        if (!frame.hasSessionId()) {
            throw new IllegalArgumentException("source frame must carry session_id to be numbered");
        }
        if (frame.getFrameNumber() == 0) {
            throw new IllegalArgumentException("source frame must carry a non-zero placeholder frame_number to be numbered");
        }
        return new UnnumberedFrame(frame.toByteArray(), frameNumberOffset(frame.getSessionId().getSerializedSize()),
                frame.getBodyCase());
    }

    /** The exact encoded size, which numbering does not change. */
    public int encodedBytes() {
        return bytes.length;
    }

    public SourceFrame.BodyCase body() {
        return body;
    }

    int frameNumberOffset() {
        return frameNumberOffset;
    }

    /** Writes {@code frameNumber} ({@code >= 1}) into the frame, once, and hands the bytes over for sending. */
    public EncodedFrame number(long frameNumber) {
        if (frameNumber < 1) {
            throw new IllegalArgumentException("frame_number must be 1..2^63-1, got " + frameNumber);
        }
        if (numbered) {
            throw new IllegalStateException("frame is already numbered");
        }
        numbered = true;
        LONG_LE.set(bytes, frameNumberOffset, frameNumber);
        return new EncodedFrame(bytes, body);
    }
}
