package orbitkv.conformance.session;

import com.google.protobuf.InvalidProtocolBufferException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;

/**
 * A {@link FaultProxy.Interceptor} that reads InventorySession v4 off the wire between a requester and a
 * source: HTTP/2 frames (RFC 9113: 9-byte header, DATA payloads with optional padding), reassembled per
 * stream into gRPC messages (1-byte compressed flag, 4-byte big-endian length), parsed as the schema's
 * {@code SourceFrame}s (toward the requester) and {@code RequesterFrame}s (toward the source).
 *
 * <p><b>Credit conservation from the wire (SES-13).</b> Per session (stream) it keeps the encoded size of
 * every credit-consuming frame (SnapshotBegin, SnapshotPage, SnapshotCommit, Delta) by frame number, the
 * highest ACK seen toward the source, and the window the source granted in {@code OpenAccepted}. When a
 * credit frame passes toward the requester, the bytes of frames above the last ACK seen must fit the window:
 * every ACK the source could have used to send that frame passed this proxy earlier, so this is a necessary
 * condition computed without asking the implementation.
 *
 * <p><b>Faults.</b> On request it corrupts the next data frame toward the requester in a way the receiver
 * can detect (a delta's first byte becomes an invalid tag; a page's last byte is flipped, which the
 * snapshot's transcript digest must catch, SES-11) and reorders the next two single-message DATA frames of
 * one stream (it holds the first back until the second passes: FRAME_OUT_OF_ORDER at the requester). Lengths never change, so HTTP/2 framing and flow control
 * stay intact. There is no checksum below the session, so undetectable value changes are not injected.
 */
final class GrpcWireTap implements FaultProxy.Interceptor {
    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final int DATA = 0;
    private static final int PADDED = 0x8;

    private final Map<Long, Connection> connections = new ConcurrentHashMap<>();
    private final AtomicInteger corruptRequests = new AtomicInteger();
    private final AtomicInteger reorderRequests = new AtomicInteger();
    final AtomicLong corrupted = new AtomicLong();
    final AtomicLong reordered = new AtomicLong();
    final AtomicLong creditFramesChecked = new AtomicLong();
    final AtomicLong acksSeen = new AtomicLong();
    private final List<String> violations = new ArrayList<>();

    /** One direction of one connection: unparsed bytes and per-stream gRPC reassembly. */
    private static final class Direction {
        final ByteArrayOutputStream pending = new ByteArrayOutputStream();
        final Map<Integer, ByteArrayOutputStream> grpc = new HashMap<>();
        boolean prefaceDone;
        /** A single-message DATA frame held back to be forwarded after the next one of its stream (reordering). */
        byte[] held;
    }

    /** Credit state of one session (one HTTP/2 stream), as seen on the wire. */
    private static final class Session {
        long window = -1;
        long lastAck;
        final TreeMap<Long, Long> outstanding = new TreeMap<>();
    }

    private static final class Connection {
        final Direction up = new Direction();
        final Direction down = new Direction();
        final Map<Integer, Session> sessions = new HashMap<>();
    }

    void corruptNext() {
        corruptRequests.incrementAndGet();
    }

    void reorderNext() {
        reorderRequests.incrementAndGet();
    }

    /** Credit violations seen so far (empty in a conforming pair). */
    synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    @Override
    public byte[] intercept(long connection, boolean towardUpstream, byte[] bytes) {
        Connection c = connections.computeIfAbsent(connection, k -> new Connection());
        Direction d = towardUpstream ? c.up : c.down;
        d.pending.writeBytes(bytes);
        byte[] buf = d.pending.toByteArray();
        int pos = 0;
        ByteArrayOutputStream out = new ByteArrayOutputStream(buf.length);
        if (towardUpstream && !d.prefaceDone) {
            if (buf.length < PREFACE.length) {
                return new byte[0];
            }
            out.write(buf, 0, PREFACE.length);
            pos = PREFACE.length;
            d.prefaceDone = true;
        }
        List<byte[]> frames = new ArrayList<>();
        while (buf.length - pos >= 9) {
            int len = ((buf[pos] & 0xff) << 16) | ((buf[pos + 1] & 0xff) << 8) | (buf[pos + 2] & 0xff);
            if (buf.length - pos < 9 + len) {
                break;
            }
            frames.add(java.util.Arrays.copyOfRange(buf, pos, pos + 9 + len));
            pos += 9 + len;
        }
        d.pending.reset();
        d.pending.write(buf, pos, buf.length - pos); // a partial frame waits for its rest
        boolean[] singleMessage = new boolean[frames.size()];
        for (int i = 0; i < frames.size(); i++) {
            singleMessage[i] = observe(c, d, towardUpstream, frames.get(i));
        }
        for (int i = 0; i < frames.size(); i++) {
            byte[] f = frames.get(i);
            if (!towardUpstream && singleMessage[i] && d.held != null && streamOf(d.held) == streamOf(f)) {
                out.writeBytes(f); // the later frame first, then the held one: FRAME_OUT_OF_ORDER at the requester
                out.writeBytes(d.held);
                d.held = null;
                reordered.incrementAndGet();
            } else if (!towardUpstream && singleMessage[i] && d.held == null
                    && reorderRequests.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                d.held = f; // released by the next single-message frame of this stream (a liveness at the latest)
            } else {
                out.writeBytes(f);
            }
        }
        return out.toByteArray();
    }

    /** Feeds one HTTP/2 frame to reassembly and accounting; true iff it is a DATA frame of exactly one message. */
    private boolean observe(Connection c, Direction d, boolean towardUpstream, byte[] frame) {
        int type = frame[3] & 0xff;
        int flags = frame[4] & 0xff;
        int stream = ByteBuffer.wrap(frame, 5, 4).getInt() & 0x7fffffff;
        if (type != DATA || stream == 0) {
            return false;
        }
        int start = 9;
        int end = frame.length;
        if ((flags & PADDED) != 0) {
            int pad = frame[9] & 0xff;
            start = 10;
            end = frame.length - pad;
        }
        ByteArrayOutputStream g = d.grpc.computeIfAbsent(stream, k -> new ByteArrayOutputStream());
        boolean alignedStart = g.size() == 0;
        g.write(frame, start, end - start);
        byte[] data = g.toByteArray();
        int p = 0;
        int messages = 0;
        while (data.length - p >= 5) {
            int len = ByteBuffer.wrap(data, p + 1, 4).getInt();
            if (data.length - p < 5 + len) {
                break;
            }
            byte[] msg = java.util.Arrays.copyOfRange(data, p + 5, p + 5 + len);
            boolean corrupt = !towardUpstream && alignedStart && messages == 0 && p + 5 + len == data.length
                    && corruptRequests.get() > 0;
            account(c, stream, towardUpstream, msg, corrupt ? frame : null, start + 5);
            messages++;
            p += 5 + len;
        }
        g.reset();
        g.write(data, p, data.length - p);
        return alignedStart && messages == 1 && p == data.length;
    }

    private void account(Connection c, int stream, boolean towardUpstream, byte[] msg, byte[] frameToCorrupt, int msgOffset) {
        synchronized (this) {
            Session s = c.sessions.computeIfAbsent(stream, k -> new Session());
            try {
                if (towardUpstream) {
                    RequesterFrame f = RequesterFrame.parseFrom(msg);
                    if (f.hasOpen() && f.getOpen().getReceiveWindowBytes() > 0 && s.window < 0) {
                        s.window = f.getOpen().getReceiveWindowBytes();
                    }
                    if (f.hasAck()) {
                        acksSeen.incrementAndGet();
                        s.lastAck = Math.max(s.lastAck, f.getAck().getConsumedThroughFrame());
                        s.outstanding.headMap(s.lastAck, true).clear();
                    }
                    return;
                }
                SourceFrame f = SourceFrame.parseFrom(msg);
                if (f.hasAccepted()) {
                    s.window = f.getAccepted().getWindowBytes();
                }
                boolean credit = f.hasSnapshotBegin() || f.hasSnapshotPage() || f.hasSnapshotCommit() || f.hasDelta();
                if (credit) {
                    s.outstanding.put(f.getFrameNumber(), (long) msg.length);
                    long sum = s.outstanding.tailMap(s.lastAck, false).values().stream().mapToLong(Long::longValue).sum();
                    creditFramesChecked.incrementAndGet();
                    if (s.window >= 0 && sum > s.window && violations.size() < 16) {
                        violations.add("stream " + stream + " frame " + f.getFrameNumber() + " (" + f.getBodyCase() + "): " + sum
                                + " bytes above the last ACK " + s.lastAck + " exceed the window " + s.window);
                    }
                }
                if (frameToCorrupt != null && (f.hasDelta() || f.hasSnapshotPage()) && corruptRequests.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    if (f.hasDelta()) {
                        frameToCorrupt[msgOffset] = (byte) 0xff; // an invalid tag: the frame does not parse
                    } else {
                        frameToCorrupt[msgOffset + msg.length - 1] ^= 1; // a record value changes: the digest must catch it
                    }
                    corrupted.incrementAndGet();
                }
            } catch (InvalidProtocolBufferException e) {
                // bytes this tap corrupted earlier, or not a session message: nothing to account
            }
        }
    }

    private static int streamOf(byte[] frame) {
        return ByteBuffer.wrap(frame, 5, 4).getInt() & 0x7fffffff;
    }

    /** Drops the accounting of connections that ended (bounded memory over a long schedule run). */
    void forget(long connection) {
        connections.remove(connection);
    }
}
