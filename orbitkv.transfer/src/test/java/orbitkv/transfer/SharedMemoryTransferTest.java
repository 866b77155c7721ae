package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import orbitkv.inventory.Medium;
import orbitkv.testing.Await;
import orbitkv.transfer.FaultProxy.Fault;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The transfer suite on the same-host shared-memory backend (SSD blocks go over TCP, as documented). */
@Tag("unit")
class SharedMemoryTransferTest extends AbstractTransferBackendTest {
    @Override
    NativeIo io() {
        return NativeIo.detect();
    }

    @Override
    BackendPolicy policy() {
        return BackendPolicy.SHARED_MEMORY_PREFERRED;
    }

    @Override
    Backend dramBackend() {
        return Backend.SHARED_MEMORY;
    }

    @Override
    ReadFailure cutFailure() {
        return ReadFailure.SHARED_MEMORY_FAULT;
    }

    @Override
    void arm(Fault fault, Duration delay) {
        f.copier.arm(fault, delay);
    }

    @Override
    void endStall(long deadlineNanos) {
        Await.inJvm("the stalled READ's deadline passed", Duration.ofSeconds(10),
                () -> System.nanoTime() - deadlineNanos > 0);
        f.copier.resume();
    }

    @Override
    boolean stallHolding() {
        return f.copier.stalled();
    }

    @Test
    @DisplayName("the handshake: a source on another host (boot id) names no arena; the READ goes over TCP, counted")
    void otherHostFallsBackToTcp() throws Exception {
        f.close();
        f = new TransferFixture(TransferFixture.Options.defaults(io()).withBootIds(UUID.randomUUID(),
                orbitkv.transfer.frame.HostIdentity.bootId()));
        byte[] bytes = TransferFixture.payload(70_000, 20, 0);
        long seq = f.payloads.putDram(TransferFixture.key(20), bytes);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(20), Medium.DRAM, seq)));
        assertThat(g.sharedMemoryEligible()).isFalse();
        MemorySegment dst = TransferFixture.destination(arena, bytes.length);
        assertThat(read(g, 0, dst)).isInstanceOfSatisfying(ReadResult.Completed.class, c -> {
            assertThat(c.backend()).isEqualTo(Backend.TCP);
            assertThat(c.fallback()).isEqualTo(SharedMemoryFallback.OTHER_HOST);
        });
        assertBytes(dst, bytes);
        assertThat(f.engine.status().sharedMemoryFallbacks().get(SharedMemoryFallback.OTHER_HOST)).isEqualTo(1);
        assertDrainedAndReleased(g);
    }

    @Test
    @DisplayName("a same-host grant names the arena; the requester maps it read-only once for many READs")
    void arenaMappedOnce() {
        Grant g = null;
        for (int i = 0; i < 3; i++) {
            byte[] bytes = TransferFixture.payload(50_000, 21, i);
            long seq = f.payloads.putDram(TransferFixture.key(30 + i), bytes);
            g = f.grant(List.of(new BlockRef(TransferFixture.key(30 + i), Medium.DRAM, seq)));
            assertThat(g.sharedMemoryEligible()).isTrue();
            MemorySegment dst = TransferFixture.destination(arena, bytes.length);
            assertThat(read(g, 0, dst)).isInstanceOf(ReadResult.Completed.class);
            assertBytes(dst, bytes);
            assertThat(TransferFixture.await(f.engine.release(g))).isInstanceOf(ReleaseOutcome.Released.class);
        }
        assertThat(f.engine.status().arenasMapped()).isEqualTo(1);
        assertThat(f.engine.status().route(Backend.TCP, PeerRouteClass.PEER_DRAM).reads()).as("no READ over TCP").isZero();
        // issue 37 item 5: the first grant came over gRPC and named the data endpoint; the next two were asked on one
        // data connection, which carried nothing else
        assertThat(f.engine.status().authorizesOnDataChannel()).isEqualTo(2);
        assertThat(f.source.status().dataConnections()).as("one connection, for the AUTHORIZEs").isEqualTo(1);
        assertNothingHeld();
    }
}
