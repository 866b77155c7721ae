package orbitkv.transfer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;

/**
 * The benchmarks' source and requester: a {@link TransferFixture} (real loopback gRPC, data listener, /dev/shm
 * arena) holding {@code blocks} DRAM blocks of {@code blockBytes}, grants over them, and destinations.
 */
final class BenchSource implements AutoCloseable {
    static final long BYTES_PER_OP = 16L << 20;

    final TransferFixture f;
    final int blockBytes;
    final List<BlockRef> refs = new ArrayList<>();
    final MemorySegment[] destinations;
    final Arena arena = Arena.ofShared();
    private final List<Grant> grants = new ArrayList<>();

    BenchSource(int blockBytes, int blocks, NativeIo io) throws Exception {
        this(blockBytes, blocks, io, true);
    }

    /** @param inlineAuthorization the source's Authorize/Release on its event loop (the Manager's choice) or on an executor */
    BenchSource(int blockBytes, int blocks, NativeIo io, boolean inlineAuthorization) throws Exception {
        this(blockBytes, blocks, io, inlineAuthorization, null, null);
    }

    /** With TLS on the data channel when both are non-null (issue 33; {@code DataChannelTlsHarness}). */
    BenchSource(int blockBytes, int blocks, NativeIo io, boolean inlineAuthorization, DataChannelTls sourceTls,
            DataChannelTls engineTls) throws Exception {
        this.blockBytes = blockBytes;
        TransferConfig c = TransferConfig.defaults().withReadsPerConnection(readsPerConnection());
        this.f = new TransferFixture(TransferFixture.Options.defaults(io).withConfig(c).withInlineAuthorization(inlineAuthorization)
                .withTls(sourceTls, engineTls));
        this.destinations = new MemorySegment[blocks];
        for (int i = 0; i < blocks; i++) {
            byte[] b = TransferFixture.payload(blockBytes, 1, i);
            refs.add(new BlockRef(TransferFixture.key(i), Medium.DRAM, f.payloads.putDram(TransferFixture.key(i), b)));
            destinations[i] = arena.allocate(blockBytes, 4096);
        }
    }

    /** The requester's pipelining depth: {@code -Dbench.readsPerConnection}, else the default. */
    static int readsPerConnection() {
        return Integer.getInteger("bench.readsPerConnection", TransferConfig.DEFAULT_READS_PER_CONNECTION_MAX);
    }

    /** Blocks per op so that one op moves {@link #BYTES_PER_OP}. */
    static int blocksPerOp(int blockBytes) {
        return (int) Math.max(1, BYTES_PER_OP / blockBytes);
    }

    /** Grants every block (in grants of at most 128). */
    void authorizeAll() {
        grants.clear();
        for (int i = 0; i < refs.size(); i += 128) {
            grants.add(f.grant(refs.subList(i, Math.min(refs.size(), i + 128))));
        }
    }

    Grant grantOf(int block) {
        return grants.get(block / 128);
    }

    void releaseAll() {
        for (Grant g : grants) {
            TransferFixture.await(f.engine.release(g));
        }
        grants.clear();
    }

    /** READs every block with at most {@code window} in flight; fails on anything but Completed. */
    void readAll(BackendPolicy policy, int window) {
        List<CompletableFuture<ReadResult>> inFlight = new ArrayList<>(window);
        for (int i = 0; i < refs.size(); i++) {
            if (inFlight.size() == window) {
                check(inFlight.removeFirst().join());
            }
            inFlight.add(f.engine.read(grantOf(i), i % 128, Destination.of(destinations[i]), policy,
                    Duration.ofSeconds(30)).outcome().toCompletableFuture());
        }
        for (CompletableFuture<ReadResult> o : inFlight) {
            check(o.orTimeout(30, TimeUnit.SECONDS).join());
        }
    }

    /** The arena bytes of block {@code i} (pinned once, for the baselines; the fixture's owner never evicts them). */
    MemorySegment arenaBytes(int i) {
        BlockRef r = refs.get(i);
        if (f.payloads.pin(r.key(), r.medium(), r.residencySequence()) instanceof PayloadSource.PinResult.Pinned p
                && p.location() instanceof PayloadSource.PayloadLocation.InArena a) {
            return a.bytes();
        }
        throw new IllegalStateException("block " + i + " is not in the arena");
    }

    /** The checksum a verified READ must compute: copy and CRC32C chunk by chunk (1 MiB), as the READ does. */
    static long copyAndCrc(MemorySegment[] sources, MemorySegment[] destinations, int blockBytes) {
        long x = 0;
        int chunk = TransferConfig.DEFAULT_SHARED_MEMORY_CHUNK_BYTES;
        for (int i = 0; i < sources.length; i++) {
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            for (long o = 0; o < blockBytes; o += chunk) {
                long n = Math.min(chunk, blockBytes - o);
                MemorySegment.copy(sources[i], o, destinations[i], o, n);
                crc.update(destinations[i].asSlice(o, n).asByteBuffer());
            }
            x += crc.getValue();
        }
        return x;
    }

    static void check(ReadResult o) {
        if (!(o instanceof ReadResult.Completed)) {
            throw new IllegalStateException("benchmark READ did not complete: " + o);
        }
    }

    @Override
    public void close() throws java.io.IOException {
        f.close();
        arena.close();
    }
}
