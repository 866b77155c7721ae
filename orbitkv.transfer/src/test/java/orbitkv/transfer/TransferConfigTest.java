package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** TransferConfig validates in one place and names both sides of a broken relation (BND-6). */
@Tag("unit")
class TransferConfigTest {
    private static final TransferConfig D = TransferConfig.defaults();

    @Test
    @DisplayName("BND-6 the defaults are valid and equal the documented constants")
    void defaults() {
        assertThat(D.authorizeKeysMax()).isEqualTo(128);
        assertThat(D.receiveInFlightBytesMax()).isEqualTo(256L << 20);
        assertThat(D.sourceEgressInFlightBytesMax()).isEqualTo(256L << 20);
        assertThat(D.grantExpiryMs()).isEqualTo(10_000);
        assertThat(D.sourceEventLoopThreads()).isEqualTo(2);
        assertThat(D.requesterEventLoopThreads()).isEqualTo(2);
        assertThat(D.readsPerConnectionMax()).isEqualTo(4);
        assertThat(D.withWindows(64L << 20, 256L << 20, 256L << 20, 2, 2).readsPerConnectionMax())
                .as("the pipelining depth is capped at readsInFlightMax").isEqualTo(2);
        assertThat(D.dataConnectionsMax()).isEqualTo(1024);
        assertThat(D.dataConnectionsPerAddressMax()).isEqualTo(64);
        assertThat(D.dataHeaderTimeoutMs()).isEqualTo(5000);
        assertThat(D.dataIdleTimeoutMs()).isEqualTo(120_000);
        assertThat(D.dataReadsQueuedPerConnectionMax()).as("the deepest requester pipeline (64) fits").isEqualTo(64);
    }

    static Stream<Arguments> broken() {
        return Stream.of(
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withWindows(64L << 20, 32L << 20, 256L << 20, 64, 16),
                        "sourceEgressInFlightBytesMax (33554432) must be >= blockBytesMax (67108864)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withWindows(64L << 20, 256L << 20, 1L << 20, 64, 16),
                        "receiveInFlightBytesMax (1048576) must be >= blockBytesMax (67108864)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withWindows(1L << 31, 1L << 32, 1L << 32, 64, 16),
                        "blockBytesMax (2147483648) must be <= Integer.MAX_VALUE"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withWindows(64L << 20, 256L << 20, 256L << 20, 8, 16),
                        "connectionsPerSourceMax (16) must be <= readsInFlightMax (8)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withReadsPerConnection(0),
                        "readsPerConnectionMax (0) must be >= 1 (1)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withReadsPerConnection(65),
                        "readsPerConnectionMax (65) must be <= readsInFlightMax (64)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withPins(10, 1L << 30, 5, 4L << 30, 1L << 20),
                        "pinsTotalMax (5) must be >= pinsPerRequesterMax (10)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withPins(10, 1L << 30, 100, 1L << 29, 1L << 20),
                        "pinnedBytesTotalMax (536870912) must be >= pinnedBytesPerRequesterMax (1073741824)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withPins(10, 1L << 30, 100, 4L << 30, 5L << 30),
                        "prefetchPinnedBytesTotalMax (5368709120) must be <= pinnedBytesTotalMax (4294967296)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withPins(10, 1L << 20, 100, 4L << 30, 0),
                        "pinnedBytesPerRequesterMax (1048576) must be >= blockBytesMax (67108864)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withGrantTiming(1000, 100, 1000),
                        "grantExpiryMs (1000) must be >= grantSafetyMarginMs + 1 (1001)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withGrantTiming(1000, 2000, 10),
                        "expirySweepIntervalMs (2000) must be <= grantExpiryMs (1000)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withRequestBounds(0, 65536),
                        "authorizeKeysMax (0) must be >= 1 (1)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withRequestBounds(128, 100),
                        "authorizeRequestBytesMax (100) must be >= 1024 (1024)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withEventLoops(0, 2),
                        "sourceEventLoopThreads (0) must be >= 1 (1)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withEventLoops(2, 65),
                        "requesterEventLoopThreads (65) must be <= EVENT_LOOP_THREADS_MAX (64)"),
                // issue 33: data listener bounds
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withDataListener(0, 64, 5000, 120_000, 64),
                        "dataConnectionsMax (0) must be >= 1 (1)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withDataListener(1024, 8, 5000, 120_000, 64),
                        "dataConnectionsPerAddressMax (8) must be >= connectionsPerSourceMax (16)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withDataListener(32, 64, 5000, 120_000, 64),
                        "dataConnectionsPerAddressMax (64) must be <= dataConnectionsMax (32)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withDataListener(1024, 64, 0, 120_000, 64),
                        "dataHeaderTimeoutMs (0) must be >= 1 (1)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withDataListener(1024, 64, 5000, 0, 64),
                        "dataIdleTimeoutMs (0) must be >= 1 (1)"),
                Arguments.of((UnaryOperator<TransferConfig>) c -> c.withDataListener(1024, 64, 5000, 120_000, 3),
                        "dataReadsQueuedPerConnectionMax (3) must be >= readsPerConnectionMax (4)"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("broken")
    @DisplayName("BND-6 a broken relation is refused with both sides named")
    void brokenRelation(UnaryOperator<TransferConfig> change, String message) {
        assertThatThrownBy(() -> change.apply(D)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }
}
