package orbitkv.conformance.manager;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The data-port attacks of issue 33, one driver for {@link AttackHarness} and {@link DataListenerFloodGateTest} (issue
 * 34 item 6): the never-read READ flood (connections from 127.0.0.2 with a 4 KiB receive buffer, pipelining READs of
 * random grant ids, never reading an answer) and the half-open connection storm (paced connections from 127.0.0.3,
 * each sending 4 of the 40 header bytes, the newest {@code heldMax} held open). Both run on their own threads until
 * {@code attacking} is false; the caller then joins the threads (and may close the flood's sockets first, to end a
 * write blocked on a full socket).
 */
final class DataPortFlood {
    /** READ frames written per chunk. */
    private static final int CHUNK_FRAMES = 8192;

    private DataPortFlood() {}

    /**
     * The READ flood: {@code connections} connections to {@code data}, each writing at most {@code framesMax} READ
     * frames ({@link Long#MAX_VALUE}: until stopped); bytes written are added to {@code bytes}; each connection is
     * added to {@code opened} before its thread starts.
     */
    static List<Thread> readFlood(InetSocketAddress data, int connections, long framesMax, AtomicBoolean attacking,
                                  AtomicLong bytes, List<SocketChannel> opened) throws IOException {
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            SocketChannel s = open("127.0.0.2", data);
            opened.add(s);
            threads.add(Thread.ofPlatform().daemon().name("flood-" + c).start(() -> {
                try (s) {
                    for (long sent = 0; sent < framesMax && attacking.get(); sent += CHUNK_FRAMES) {
                        ByteBuffer b = floodChunk(CHUNK_FRAMES);
                        while (b.hasRemaining() && attacking.get()) {
                            bytes.addAndGet(s.write(b));
                        }
                    }
                } catch (IOException closed) {
                    // the source closed it, or the caller did under a blocked write
                }
            }));
        }
        return threads;
    }

    /**
     * The half-open storm: {@code perSecond} connections a second to {@code data} (paced, so that the attacker does
     * not simply take a core from the Manager: pacing, not synchronization), each sending 4 header bytes; the newest
     * {@code heldMax} stay open (older ones are closed), and all are closed when the storm stops. Connects are counted
     * in {@code connects}.
     */
    static Thread storm(InetSocketAddress data, int perSecond, int heldMax, AtomicBoolean attacking, AtomicLong connects) {
        return Thread.ofPlatform().daemon().name("storm").start(() -> {
            ArrayDeque<SocketChannel> held = new ArrayDeque<>();
            long next = System.nanoTime();
            while (attacking.get()) {
                next += 1_000_000_000L / perSecond;
                LockSupport.parkNanos(next - System.nanoTime());
                try {
                    SocketChannel s = open("127.0.0.3", data);
                    held.addLast(s);
                    s.write(ByteBuffer.wrap(new byte[] {0x4F, 0x4B, 0x56, 0x54}));
                    connects.incrementAndGet();
                    if (held.size() > heldMax) {
                        closeQuietly(held.removeFirst());
                    }
                } catch (IOException refused) {
                    // reset by the source: counted there
                }
            }
            held.forEach(DataPortFlood::closeQuietly);
        });
    }

    /** {@code frames} READ frames (40 bytes each: magic, version, type, random grant id, offsets) ready to write. */
    static ByteBuffer floodChunk(int frames) {
        ByteBuffer b = ByteBuffer.allocate(frames * 40);
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < frames; i++) {
            b.putInt(0x4F4B5654).put((byte) 1).put((byte) 1).putShort((short) 0).putLong(r.nextLong()).putLong(r.nextLong())
                    .putInt(0).putInt(0).putLong(i);
        }
        return b.flip();
    }

    /** A connection from loopback address {@code from} with a 4 KiB receive buffer (answers pile up at the source). */
    static SocketChannel open(String from, InetSocketAddress to) throws IOException {
        SocketChannel s = SocketChannel.open();
        s.bind(new InetSocketAddress(from, 0));
        s.setOption(StandardSocketOptions.SO_RCVBUF, 4096);
        s.connect(to);
        return s;
    }

    static void closeQuietly(SocketChannel s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
