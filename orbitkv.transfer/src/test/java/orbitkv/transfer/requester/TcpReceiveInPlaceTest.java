package orbitkv.transfer.requester;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import orbitkv.inventory.Medium;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.Destination;
import orbitkv.transfer.Grant;
import orbitkv.transfer.NativeIo;
import orbitkv.transfer.ReadResult;
import orbitkv.transfer.TransferFixture;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The TCP backend receives payload straight into a native destination: on both native transports the socket
 * reads into the destination's slices, so no payload byte is copied in user space; a heap destination costs
 * exactly one copy of each byte.
 */
@Tag("unit")
class TcpReceiveInPlaceTest {
    @ParameterizedTest(name = "{0}")
    @EnumSource(NativeIo.class)
    @DisplayName("a native destination is filled by the socket itself; a heap one by one copy")
    void inPlace(NativeIo io) throws Exception {
        try (TransferFixture f = new TransferFixture(TransferFixture.Options.defaults(io)); Arena arena = Arena.ofShared()) {
            int size = 16 << 20;
            byte[] bytes = TransferFixture.payload(size, 1, 1);
            long a = f.payloads.putDram(TransferFixture.key(1), bytes);
            long b = f.payloads.putSsd(TransferFixture.key(2), bytes);
            Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a),
                    new BlockRef(TransferFixture.key(2), Medium.SSD, b)));
            MemorySegment dst = arena.allocate(size, 4096);
            assertThat(TransferFixture.await(f.engine.read(g, 0, Destination.of(dst), BackendPolicy.TCP_ONLY,
                    Duration.ofSeconds(20)))).isInstanceOf(ReadResult.Completed.class);
            assertThat(dst.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(bytes);
            assertThat(f.engine.tcpCopiedBytes()).as("bytes copied in user space").isZero();
            byte[] heap = new byte[size];
            assertThat(TransferFixture.await(f.engine.read(g, 1, Destination.of(MemorySegment.ofArray(heap)),
                    BackendPolicy.TCP_ONLY, Duration.ofSeconds(20)))).isInstanceOf(ReadResult.Completed.class);
            assertThat(heap).isEqualTo(bytes);
            assertThat(f.engine.tcpCopiedBytes()).isEqualTo(size);
        }
    }

    @org.junit.jupiter.api.Test
    @DisplayName("a confined arena's memory is refused as a destination (the engine fills it on its own threads)")
    void confinedRefused() {
        try (Arena confined = Arena.ofConfined()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> Destination.of(confined.allocate(10)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("accessible from any thread");
        }
    }
}
