package orbitkv.conformance.mutant;

import com.google.protobuf.InvalidProtocolBufferException;
import java.util.ArrayList;
import java.util.List;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;

/**
 * What a {@link WireRewriteProxy} does to the frames of one InventorySession stream: each gRPC message the
 * requester sends is given to {@link #toSource}, each one the source sends to {@link #toRequester}; each
 * returns the frames to forward in its place (none drops it, several insert). One instance per stream, so
 * a rewrite may keep per-stream state; the proxy calls one direction at a time per direction (each
 * direction is serialized), and a stateful rewrite that reads both directions synchronizes itself.
 *
 * <p>A message that is not a frame (the kit's garbage bytes) and a frame a rewrite returns unchanged travel
 * as the original bytes, so the identity rewrite is byte-transparent.
 */
abstract class StreamRewrite {
    /** Requester → source: the frames to forward for {@code f}; default unchanged. */
    List<RequesterFrame> requesterFrame(RequesterFrame f) {
        return List.of(f);
    }

    /** Source → requester: the frames to forward for {@code f}; default unchanged. */
    List<SourceFrame> sourceFrame(SourceFrame f) {
        return List.of(f);
    }

    /** The identity: every frame passes unchanged. */
    static StreamRewrite identity() {
        return new StreamRewrite() {};
    }

    final List<byte[]> toSource(byte[] raw) {
        RequesterFrame f;
        try {
            f = RequesterFrame.parseFrom(raw);
        } catch (InvalidProtocolBufferException e) {
            return List.of(raw);
        }
        return encode(raw, f, requesterFrame(f));
    }

    final List<byte[]> toRequester(byte[] raw) {
        SourceFrame f;
        try {
            f = SourceFrame.parseFrom(raw);
        } catch (InvalidProtocolBufferException e) {
            return List.of(raw);
        }
        return encode(raw, f, sourceFrame(f));
    }

    private static <F extends com.google.protobuf.MessageLite> List<byte[]> encode(byte[] raw, F parsed, List<F> out) {
        List<byte[]> bytes = new ArrayList<>(out.size());
        for (F f : out) {
            bytes.add(f == parsed ? raw : f.toByteArray());
        }
        return bytes;
    }
}
