package orbitkv.conformance.peer;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * The gRPC-message faults of {@link LinkFaults.FrameFaults} on one plaintext HTTP/2 connection (RFC 9113: a
 * 24-byte client preface, then frames of a 9-byte header and a payload; gRPC messages are a 1-byte flag and a
 * 4-byte big-endian length, then the message). Both directions of the connection share this object because
 * a duplicated DATA frame is paid for by withholding the receiver's WINDOW_UPDATE increments in the other
 * direction. Each direction is driven by one thread; the methods synchronize on this object.
 *
 * <p>Bounds: at most {@value #STREAMS_MAX} streams are tracked per connection (frames of further streams
 * pass unchanged), a partial frame is buffered up to {@value #FRAME_BYTES_MAX} bytes (beyond, the direction
 * stops parsing and forwards everything unchanged).
 */
final class Http2FrameFaults {
    static final int STREAMS_MAX = 1024;
    static final int FRAME_BYTES_MAX = 16 << 20;
    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final int DATA = 0x0;
    private static final int HEADERS = 0x1;
    private static final int RST_STREAM = 0x3;
    private static final int WINDOW_UPDATE = 0x8;
    private static final int END_STREAM = 0x1;
    private static final int PADDED = 0x8;

    /** Counters the proxy reports per link. */
    interface Counts {
        void duplicated();

        void reordered();

        void corrupted();

        void oversized();
    }

    /** gRPC reassembly state of one stream in one direction. */
    private static final class StreamState {
        int headerHave;
        final byte[] header = new byte[5];
        long bodyRemaining;

        boolean atBoundary() {
            return headerHave == 0 && bodyRemaining == 0;
        }

        void consume(byte[] data, int from, int to) {
            int i = from;
            while (i < to) {
                if (bodyRemaining > 0) {
                    int n = (int) Math.min(bodyRemaining, to - i);
                    bodyRemaining -= n;
                    i += n;
                } else {
                    header[headerHave++] = data[i++];
                    if (headerHave == 5) {
                        bodyRemaining = ((header[1] & 0xffL) << 24) | ((header[2] & 0xff) << 16)
                                | ((header[3] & 0xff) << 8) | (header[4] & 0xff);
                        headerHave = 0;
                    }
                }
            }
        }
    }

    /** One direction's parser. */
    private final class Direction {
        final boolean towardUpstream;
        final SplittableRandom random;
        final ByteArrayOutputStream pending = new ByteArrayOutputStream();
        final Map<Integer, StreamState> streams = new HashMap<>();
        /** WINDOW_UPDATE increments to withhold in this direction, per stream (0 = connection). */
        final Map<Integer, Long> debt = new HashMap<>();
        boolean prefaceDone;
        boolean passThrough;
        byte[] held;
        int heldStream;
        long heldSinceNanos;

        Direction(boolean towardUpstream, SplittableRandom random) {
            this.towardUpstream = towardUpstream;
            this.random = random;
            this.prefaceDone = !towardUpstream; // only the client sends the preface
        }
    }

    private final Supplier<LinkFaults.FrameFaults> faults;
    private final Counts counts;
    private final Direction up;
    private final Direction down;

    Http2FrameFaults(Supplier<LinkFaults.FrameFaults> faults, SplittableRandom random, Counts counts) {
        this.faults = faults;
        this.counts = counts;
        this.up = new Direction(true, random.split());
        this.down = new Direction(false, random.split());
    }

    /** The bytes to forward now for {@code bytes} just read in one direction (possibly fewer, more, or rewritten). */
    synchronized byte[] onBytes(boolean towardUpstream, byte[] bytes) {
        Direction d = towardUpstream ? up : down;
        if (d.passThrough) {
            return bytes;
        }
        d.pending.writeBytes(bytes);
        byte[] buf = d.pending.toByteArray();
        int pos = 0;
        ByteArrayOutputStream out = new ByteArrayOutputStream(buf.length + 64);
        if (!d.prefaceDone) {
            if (buf.length < PREFACE.length) {
                return new byte[0];
            }
            if (!Arrays.equals(buf, 0, PREFACE.length, PREFACE, 0, PREFACE.length)) {
                return passThrough(d, buf); // not HTTP/2 with prior knowledge (TLS?): never touch it
            }
            out.write(buf, 0, PREFACE.length);
            pos = PREFACE.length;
            d.prefaceDone = true;
        }
        while (buf.length - pos >= 9) {
            int len = ((buf[pos] & 0xff) << 16) | ((buf[pos + 1] & 0xff) << 8) | (buf[pos + 2] & 0xff);
            if (buf.length - pos < 9 + len) {
                break;
            }
            frame(d, Arrays.copyOfRange(buf, pos, pos + 9 + len), out);
            pos += 9 + len;
        }
        d.pending.reset();
        if (buf.length - pos > FRAME_BYTES_MAX) {
            out.write(buf, pos, buf.length - pos);
            return passThrough(d, out.toByteArray());
        }
        d.pending.write(buf, pos, buf.length - pos); // a partial frame waits for its rest
        return out.toByteArray();
    }

    private byte[] passThrough(Direction d, byte[] rest) {
        d.passThrough = true;
        byte[] out = rest;
        if (d.held != null) {
            out = concat(d.held, rest);
            d.held = null;
        }
        d.pending.reset();
        return out;
    }

    /** A reordered frame held longer than its bound is released (called when the direction is idle). */
    synchronized byte[] onIdle(boolean towardUpstream, long nowNanos) {
        Direction d = towardUpstream ? up : down;
        if (d.held != null && nowNanos - d.heldSinceNanos >= LinkFaults.FrameFaults.REORDER_HOLD_MS * 1_000_000L) {
            byte[] h = d.held;
            d.held = null;
            return h;
        }
        return null;
    }

    private void frame(Direction d, byte[] f, ByteArrayOutputStream out) {
        int type = f[3] & 0xff;
        int flags = f[4] & 0xff;
        int stream = ((f[5] & 0x7f) << 24) | ((f[6] & 0xff) << 16) | ((f[7] & 0xff) << 8) | (f[8] & 0xff);
        if (type == WINDOW_UPDATE) {
            byte[] adjusted = withholdCredit(d, f, stream);
            if (adjusted != null) {
                out.writeBytes(adjusted);
            }
            return;
        }
        Messages m = type == DATA && stream != 0 ? messages(d, f, stream, flags) : null;
        boolean faultable = m != null && (flags & (END_STREAM | PADDED)) == 0 && m.count > 0;
        boolean exactlyOne = faultable && m.count == 1 && m.start[0] == 9 && m.whole[0] && 9 + 5 + m.length[0] == f.length;
        if (d.held != null && d.heldStream == stream) {
            if (exactlyOne) { // the later frame first, then the held one
                out.writeBytes(f);
                out.writeBytes(d.held);
                d.held = null;
                counts.reordered();
                return;
            }
            out.writeBytes(d.held); // never let a held frame pass its own stream's other frames
            d.held = null;
        }
        if (type == RST_STREAM || ((type == DATA || type == HEADERS) && (flags & END_STREAM) != 0)) {
            d.streams.remove(stream);
        }
        LinkFaults.FrameFaults ff = faults.get();
        if (!faultable || !ff.applies(d.towardUpstream)) {
            out.writeBytes(f);
            return;
        }
        if (draw(d, ff.oversize())) {
            oversize(d, ff, f, m, out);
            return;
        }
        if (draw(d, ff.corrupt()) && corrupt(d, f, m, out)) {
            return;
        }
        if (draw(d, ff.duplicate()) && duplicate(d, f, m, stream, out)) {
            return;
        }
        if (draw(d, ff.reorder()) && reorder(d, f, m, stream, exactlyOne, out)) {
            return;
        }
        out.writeBytes(f);
    }

    /** One message of the frame announces {@code ff.oversizeLength()} bytes. */
    private void oversize(Direction d, LinkFaults.FrameFaults ff, byte[] f, Messages m, ByteArrayOutputStream out) {
        int i = m.start[d.random.nextInt(m.count)];
        byte[] g = f.clone();
        int l = ff.oversizeLength();
        g[i + 1] = (byte) (l >>> 24);
        g[i + 2] = (byte) (l >>> 16);
        g[i + 3] = (byte) (l >>> 8);
        g[i + 4] = (byte) l;
        out.writeBytes(g);
        counts.oversized();
    }

    /** One non-empty message gets protobuf tag 0 (a detectably malformed message); false if none can. */
    private boolean corrupt(Direction d, byte[] f, Messages m, ByteArrayOutputStream out) {
        int k = d.random.nextInt(m.count);
        if (m.length[k] > 0 && m.start[k] + 5 < f.length) {
            byte[] g = f.clone();
            g[m.start[k] + 5] = 0; // protobuf tag 0 is invalid: a detectably malformed message
            out.writeBytes(g);
            counts.corrupted();
            return true;
        }
        return false;
    }

    /** One whole message is sent twice (the copy's flow-control credit is owed back); false if none is whole. */
    private boolean duplicate(Direction d, byte[] f, Messages m, int stream, ByteArrayOutputStream out) {
        int k = m.pickWhole(d.random);
        if (k < 0) {
            return false;
        }
        int a = m.start[k];
        int end = a + 5 + m.length[k];
        // [frame up to the end of the message] [a copy of the message] [the rest]: each no larger than
        // the original frame, so the peer's maximum frame size holds
        dataFrame(out, f, 9, end);
        dataFrame(out, f, a, end);
        if (end < f.length) {
            dataFrame(out, f, end, f.length);
        }
        long copy = end - a;
        Direction back = d == up ? down : up; // the receiver's WINDOW_UPDATEs flow back
        back.debt.merge(0, copy, Long::sum);
        back.debt.merge(stream, copy, Long::sum);
        counts.duplicated();
        return true;
    }

    /** Two neighbouring messages swap, or a one-message frame is held for its stream's next; false if neither. */
    private boolean reorder(Direction d, byte[] f, Messages m, int stream, boolean exactlyOne, ByteArrayOutputStream out) {
        int k = m.pickWholePair(d.random);
        if (k >= 0) { // swap two neighbours inside the frame
            int a = m.start[k];
            int la = 5 + m.length[k];
            int lb = 5 + m.length[k + 1];
            byte[] g = f.clone();
            System.arraycopy(f, a + la, g, a, lb);
            System.arraycopy(f, a, g, a + lb, la);
            out.writeBytes(g);
            counts.reordered();
            return true;
        }
        if (exactlyOne && d.held == null) { // hold it until the next one-message frame of its stream
            d.held = f;
            d.heldStream = stream;
            d.heldSinceNanos = System.nanoTime();
            return true;
        }
        return false;
    }

    /** A DATA frame (no flags) of {@code src}'s stream carrying {@code src[from, to)}. */
    private static void dataFrame(ByteArrayOutputStream out, byte[] src, int from, int to) {
        int n = to - from;
        out.writeBytes(new byte[] {(byte) (n >>> 16), (byte) (n >>> 8), (byte) n, DATA, 0, src[5], src[6], src[7], src[8]});
        out.write(src, from, n);
    }

    private static boolean draw(Direction d, double p) {
        return p > 0 && d.random.nextDouble() < p;
    }

    /**
     * The uncompressed gRPC messages whose 5-byte prefix lies wholly inside one DATA frame: offset of the
     * prefix in the frame, message length, and whether the message ends inside the frame.
     */
    private static final class Messages {
        int count;
        int[] start = new int[8];
        int[] length = new int[8];
        boolean[] whole = new boolean[8];

        void add(int at, int len, boolean inFrame) {
            if (count == start.length) {
                start = Arrays.copyOf(start, 2 * count);
                length = Arrays.copyOf(length, 2 * count);
                whole = Arrays.copyOf(whole, 2 * count);
            }
            start[count] = at;
            length[count] = len;
            whole[count] = inFrame;
            count++;
        }

        /** A random message that ends inside the frame, or -1. */
        int pickWhole(SplittableRandom r) {
            int from = r.nextInt(count);
            for (int i = 0; i < count; i++) {
                int k = (from + i) % count;
                if (whole[k]) {
                    return k;
                }
            }
            return -1;
        }

        /** A random k such that messages k and k + 1 are adjacent and both end inside the frame, or -1. */
        int pickWholePair(SplittableRandom r) {
            if (count < 2) {
                return -1;
            }
            int from = r.nextInt(count - 1);
            for (int i = 0; i < count - 1; i++) {
                int k = (from + i) % (count - 1);
                if (whole[k] && whole[k + 1] && start[k] + 5 + length[k] == start[k + 1]) {
                    return k;
                }
            }
            return -1;
        }
    }

    /**
     * Walks a DATA frame's payload through its stream's gRPC reassembly state and returns the messages whose
     * prefix it holds wholly; null for an untracked stream (beyond {@link #STREAMS_MAX}) or a malformed frame.
     */
    private Messages messages(Direction d, byte[] f, int stream, int flags) {
        StreamState s = d.streams.get(stream);
        if (s == null) {
            if (d.streams.size() >= STREAMS_MAX) {
                return null; // untracked: passes unchanged
            }
            s = new StreamState();
            d.streams.put(stream, s);
        }
        int from = 9;
        int pad = 0;
        if ((flags & PADDED) != 0) {
            if (f.length < 10) {
                return null;
            }
            pad = f[9] & 0xff;
            from = 10;
        }
        int to = f.length - pad;
        if (to < from) {
            return null;
        }
        Messages m = new Messages();
        int i = from;
        while (i < to) {
            if (s.bodyRemaining > 0) {
                int n = (int) Math.min(s.bodyRemaining, to - i);
                s.bodyRemaining -= n;
                i += n;
            } else if (s.headerHave == 0 && to - i >= 5) {
                long len = ((f[i + 1] & 0xffL) << 24) | ((f[i + 2] & 0xff) << 16) | ((f[i + 3] & 0xff) << 8) | (f[i + 4] & 0xff);
                if (f[i] == 0 && len <= Integer.MAX_VALUE - 5) {
                    m.add(i, (int) len, i + 5 + len <= to);
                }
                s.bodyRemaining = len;
                i += 5;
            } else {
                s.consume(f, i, i + 1);
                i++;
            }
        }
        return m;
    }

    /** Lowers a WINDOW_UPDATE by the credit a duplicate already gave; null if nothing is left to send. */
    private static byte[] withholdCredit(Direction d, byte[] f, int stream) {
        if (f.length != 13) {
            return f;
        }
        long owed = d.debt.getOrDefault(stream, 0L);
        if (owed == 0) {
            return f;
        }
        long inc = ((f[9] & 0x7fL) << 24) | ((f[10] & 0xff) << 16) | ((f[11] & 0xff) << 8) | (f[12] & 0xff);
        long take = Math.min(owed, inc);
        if (owed - take == 0) {
            d.debt.remove(stream);
        } else {
            d.debt.put(stream, owed - take);
        }
        long left = inc - take;
        if (left == 0) {
            return null; // a zero increment is a protocol error: drop the frame
        }
        byte[] g = f.clone();
        g[9] = (byte) ((left >>> 24) & 0x7f);
        g[10] = (byte) (left >>> 16);
        g[11] = (byte) (left >>> 8);
        g[12] = (byte) left;
        return g;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
