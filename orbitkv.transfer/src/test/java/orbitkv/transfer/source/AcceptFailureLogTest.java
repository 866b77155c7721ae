package orbitkv.transfer.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.testing.Await;
import orbitkv.transfer.NativeIo;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.TransferFixture;
import orbitkv.transfer.frame.CountBytesWindow;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33: with its file descriptors exhausted, a Manager wrote 1.28 M identical accept-failure stack traces (451 MB
 * of log in about 20 s). The data listener's server channel now counts failed accepts, logs at most one line a second
 * naming how many it left out, pauses accepting for a second, and never lets the failure reach the pipeline's tail
 * (where Netty logs each one with its stack trace).
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AcceptFailureLogTest {
    @Test
    @DisplayName("BND-1 issue 33: accept failures were logged one stack trace each -> counted, at most one line a second,"
            + " none reaches the pipeline's tail, accepting pauses and resumes")
    void acceptFailuresWereLoggedOneStackTraceEach() throws Exception {
        NativeIo io = NativeIo.detect();
        EventLoopGroup group = io.newGroup(1);
        TransferConfig config = TransferFixture.testConfig();
        SourceCounters counters = new SourceCounters();
        List<String> lines = new ArrayList<>();
        try (DataListener listener = DataListener.bind(new InetSocketAddress("127.0.0.1", 0), group, io.serverChannel(),
                config, new GrantTable(config, System::nanoTime, counters),
                new CountBytesWindow("egress", Integer.MAX_VALUE, config.sourceEgressInFlightBytesMax()), counters, line -> {
                    synchronized (lines) {
                        lines.add(line);
                    }
                })) {
            AtomicLong atTail = new AtomicLong();
            var server = listener.serverChannel();
            server.eventLoop().submit(() -> server.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                    atTail.incrementAndGet(); // Netty's tail would log this one with its stack trace
                }
            })).sync();
            int failures = 10_000;
            long t0 = System.nanoTime();
            server.eventLoop().submit(() -> {
                for (int i = 0; i < failures; i++) {
                    server.pipeline().fireExceptionCaught(new IOException("accept(..) failed: Too many open files"));
                }
            }).sync();
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertThat(counters.dataAcceptFailures.get()).isEqualTo(failures);
            assertThat(atTail.get()).as("failures passed on to the pipeline's tail").isZero();
            synchronized (lines) {
                assertThat(lines).as("log lines for %d failures in %.2f s", failures, seconds).isNotEmpty()
                        .hasSizeLessThanOrEqualTo((int) Math.ceil(seconds) + 1);
                assertThat(lines.getFirst()).contains("accept failed", "Too many open files");
            }
            if (System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(500)) { // the pause lasts 1 s from the first
                assertThat(server.config().isAutoRead()).as("accepting paused after a failure").isFalse();
            }
            Await.inJvm("accepting resumes", Duration.ofSeconds(20), () -> server.config().isAutoRead());
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
