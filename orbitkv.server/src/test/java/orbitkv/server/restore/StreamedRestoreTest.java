package orbitkv.server.restore;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import orbitkv.index.Coverage;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A streamed restore against small in-process tiers and a fake record sink (no HTTP, no Netty channel), with a restore
 * memory budget of two records: the same restore that the non-streamed form stops at the budget
 * ({@code response-memory}) completes streamed, because a record holds its charge only until it was written
 * (issue 35 item 4, BND-1); the end record (zero-length key) carries restored count, stop and route; a cut sink gets
 * no end record and every byte returns to the budget.
 */
@Tag("unit")
@Timeout(60)
class StreamedRestoreTest {
    private static final Namespace NS = Namespace.utf8("ns");
    private static final int SIZE = 4000;
    private static final int KEYS = 8;

    @TempDir
    Path dir;
    private LocalTiers tiers;
    private final List<StateKey> keys = new ArrayList<>();
    private final ExecutorService writer = Executors.newSingleThreadExecutor();
    private final RouteSelection routes = RouteSelection.create(RoutePolicy.defaults());

    @BeforeEach
    void open() throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 256 * 1024, 64, sequence), null, sequence,
                new CopyOutBudget(2 * (RecordHeader.BYTES + 1 + SIZE) + 100));
        for (int i = 0; i < KEYS; i++) {
            StateKey k = new StateKey(NS, new byte[] {(byte) i});
            tiers.save(k, payload(i));
            keys.add(k);
        }
        assertThat(tiers.awaitSubmittedSaves(30_000)).isTrue();
    }

    @AfterEach
    void close() throws Exception {
        writer.shutdownNow();
        assertThat(writer.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        assertThat(tiers.copyOut().heldBytes()).as("every record byte returned to the budget").isZero();
        tiers.close();
    }

    private static byte[] payload(int i) {
        byte[] b = new byte[SIZE];
        Arrays.fill(b, (byte) (0x30 + i));
        return b;
    }

    private RestoreView view() {
        return new RestoreView() {
            @Override
            public IndexEvidence evidence(Namespace namespace, List<StateKey> k) {
                return IndexEvidence.none(Coverage.Unavailable, 0, k.size());
            }

            @Override
            public Optional<RestoreTransfer> transfer() {
                return Optional.empty();
            }
        };
    }

    /** A sink that writes each record on another thread (as a socket would, later), copying its bytes. */
    private final class Sink implements StreamedRestore.RecordSink {
        final List<byte[]> written = new ArrayList<>();
        final int cutAt;

        Sink(int cutAt) {
            this.cutAt = cutAt;
        }

        @Override
        public synchronized CompletableFuture<Void> write(ByteBuf record) {
            int index = written.size() + 1;
            written.add(null);
            return CompletableFuture.runAsync(() -> {
                try {
                    if (index > cutAt) {
                        throw new IllegalStateException("connection reset");
                    }
                    byte[] bytes = ByteBufUtil.getBytes(record);
                    synchronized (this) {
                        written.set(index - 1, bytes);
                    }
                } finally {
                    record.release();
                }
            }, writer);
        }
    }

    @Test
    @DisplayName("G7 BND-1 a streamed restore larger than the restore memory budget completes; the non-streamed one stops at it")
    void largerThanTheBudget() throws Exception {
        RestoreResult whole = new Restoration(tiers, view(), routes, 1 << 20, UnpooledByteBufAllocator.DEFAULT,
                new RestoreRequest(NS, keys, 30_000)).run();
        assertThat(whole.restoredKeys()).isEqualTo(2);
        assertThat(whole.stop()).isEqualTo("response-memory");
        whole.release();

        Sink sink = new Sink(Integer.MAX_VALUE);
        StreamedRestore.Outcome o = new StreamedRestore(tiers, view(), routes, 1 << 20, UnpooledByteBufAllocator.DEFAULT,
                new RestoreRequest(NS, keys, 30_000, Optional.empty(), true)).run(sink);
        assertThat(o.ended()).isTrue();
        assertThat(o.restoredKeys()).isEqualTo(KEYS);
        assertThat(o.stop()).isEqualTo("complete");
        assertThat(sink.written).hasSize(KEYS + 1);
        for (int i = 0; i < KEYS; i++) {
            byte[] rec = sink.written.get(i);
            assertThat(rec[2]).as("record %d in request order", i).isEqualTo((byte) i);
            assertThat(Arrays.copyOfRange(rec, RecordHeader.BYTES + 1, rec.length)).isEqualTo(payload(i));
        }
        JsonNode end = endRecord(sink.written.get(KEYS));
        assertThat(end.get("restored").asInt()).isEqualTo(KEYS);
        assertThat(end.get("stop").asText()).isEqualTo("complete");
        assertThat(end.get("route").asText()).isEqualTo("r=8 stop=complete routes=local-dram[0,8):ready");
    }

    /** The end record: key length 0, payload length, the JSON. */
    private static JsonNode endRecord(byte[] rec) throws Exception {
        assertThat(rec[0] << 8 | rec[1]).as("zero-length key").isZero();
        int length = (rec[2] & 0xff) << 24 | (rec[3] & 0xff) << 16 | (rec[4] & 0xff) << 8 | rec[5] & 0xff;
        assertThat(rec.length).isEqualTo(RecordHeader.BYTES + length);
        return new ObjectMapper().readTree(Arrays.copyOfRange(rec, RecordHeader.BYTES, rec.length));
    }

    @Test
    @DisplayName("G7 a cut connection gets no end record; the restore stops and every charged byte returns")
    void cutLeavesNoEndRecord() throws Exception {
        Sink sink = new Sink(3);
        StreamedRestore.Outcome o = new StreamedRestore(tiers, view(), routes, 1 << 20, UnpooledByteBufAllocator.DEFAULT,
                new RestoreRequest(NS, keys, 30_000, Optional.empty(), true)).run(sink);
        assertThat(o.ended()).isFalse();
        writer.submit(() -> {}).get(30, TimeUnit.SECONDS); // the writes already queued ended
        synchronized (sink) {
            assertThat(sink.written.size()).isLessThan(KEYS + 1);
            assertThat(sink.written.stream().filter(b -> b != null && b[0] == 0 && b[1] == 0)).as("no end record").isEmpty();
        }
    }
}
