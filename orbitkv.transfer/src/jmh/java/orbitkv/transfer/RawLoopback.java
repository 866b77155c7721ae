package orbitkv.transfer;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The baseline of the TCP READ benchmarks: a plain blocking loopback socket pair; one sender thread writes the
 * same arena bytes again and again (never short of data), the receiver reads exactly as many bytes as a READ
 * round moves into a direct destination. No framing, no request, no checksum.
 */
final class RawLoopback implements AutoCloseable {
    private final ServerSocketChannel server;
    private final SocketChannel receiver;
    private final Thread sender;
    private final ByteBuffer destination;
    private volatile boolean running = true;

    RawLoopback(MemorySegment source, MemorySegment destination) throws Exception {
        this.server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        this.receiver = SocketChannel.open(server.getLocalAddress());
        SocketChannel out = server.accept();
        ByteBuffer block = source.asByteBuffer();
        this.destination = destination.asByteBuffer();
        this.sender = Thread.ofPlatform().daemon().name("raw-loopback-sender").start(() -> {
            try (out) {
                while (running) {
                    ByteBuffer b = block.duplicate();
                    while (b.hasRemaining()) {
                        out.write(b);
                    }
                }
            } catch (Exception e) {
                // the receiver closed
            }
        });
    }

    /** Receives exactly {@code bytes} bytes. */
    void receive(long bytes) throws Exception {
        long left = bytes;
        while (left > 0) {
            ByteBuffer d = destination.clear().limit((int) Math.min(destination.capacity(), left));
            while (d.hasRemaining()) {
                left -= receiver.read(d);
            }
        }
    }

    /**
     * Receives exactly {@code bytes} bytes and checksums them with CRC32C as they arrive: the bound of any verified
     * TCP READ (a copy off the socket plus the checksum), the baseline of issue 37's TCP READ ratio.
     */
    long receiveAndCrc(long bytes) throws Exception {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        long left = bytes;
        while (left > 0) {
            ByteBuffer d = destination.clear().limit((int) Math.min(destination.capacity(), left));
            while (d.hasRemaining()) {
                left -= receiver.read(d);
            }
            crc.update(d.flip());
        }
        return crc.getValue();
    }

    @Override
    public void close() throws java.io.IOException {
        running = false;
        receiver.close();
        server.close();
        try {
            sender.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
