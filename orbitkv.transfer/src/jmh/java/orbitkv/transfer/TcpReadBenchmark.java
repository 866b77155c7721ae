package orbitkv.transfer;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * TCP READ throughput against a raw loopback socket copy of the same bytes, measured in the same run (issue 13).
 * One op moves 16 MiB in both benchmarks: {@code tcpRead} READs 16 MiB / blockBytes granted DRAM blocks from a
 * real source (data listener on the native transport, payload sent from the /dev/shm arena) into native
 * destinations, at most 8 READs in flight, each CRC32C-verified; grants are issued and released outside the
 * timed op. {@code rawSocketCopy} streams the same arena bytes over a plain blocking loopback socket pair (one
 * sender thread) into one direct destination, with no framing, no checksum, no request. Ratio of the scores =
 * READ throughput / raw copy throughput; goal ≥ 0.8.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class TcpReadBenchmark {
    @Param({"65536", "1048576", "16777216"})
    int blockBytes;

    @Param({"IO_URING"})
    NativeIo io;

    private BenchSource source;
    private SocketChannel rawReceiver;
    private ServerSocketChannel rawServer;
    private Thread rawSender;
    private volatile boolean running;
    private ByteBuffer rawDestination;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        source = new BenchSource(blockBytes, BenchSource.blocksPerOp(blockBytes), io);
        rawServer = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        rawReceiver = SocketChannel.open(rawServer.getLocalAddress());
        SocketChannel sender = rawServer.accept();
        MemorySegment arenaBytes = source.f.payloads.pin(source.refs.getFirst().key(),
                source.refs.getFirst().medium(), source.refs.getFirst().residencySequence()) instanceof
                PayloadSource.PinResult.Pinned p && p.location() instanceof PayloadSource.PayloadLocation.InArena a
                        ? a.bytes() : null;
        ByteBuffer block = arenaBytes.asByteBuffer();
        running = true;
        rawSender = Thread.ofPlatform().daemon().name("raw-sender").start(() -> {
            try (sender) {
                while (running) {
                    ByteBuffer b = block.duplicate();
                    while (b.hasRemaining()) {
                        sender.write(b);
                    }
                }
            } catch (Exception e) {
                // the receiver closed at teardown
            }
        });
        rawDestination = source.destinations[0].reinterpret(blockBytes).asByteBuffer();
    }

    @Setup(Level.Invocation)
    public void grant() {
        source.authorizeAll();
    }

    @TearDown(Level.Invocation)
    public void release() {
        source.releaseAll();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        running = false;
        rawReceiver.close();
        rawServer.close();
        rawSender.join(5000);
        source.close();
    }

    /** 16 MiB of granted blocks READ over the TCP data channel, verified. */
    @Benchmark
    public void tcpRead() {
        source.readAll(BackendPolicy.TCP_ONLY, 8);
    }

    /** 16 MiB of the same arena bytes over a raw loopback socket pair. */
    @Benchmark
    public void rawSocketCopy() throws Exception {
        long left = BenchSource.BYTES_PER_OP;
        while (left > 0) {
            ByteBuffer d = rawDestination.clear().limit((int) Math.min(rawDestination.capacity(), left));
            while (d.hasRemaining()) {
                left -= rawReceiver.read(d);
            }
        }
    }
}
