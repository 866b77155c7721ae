package orbitkv.transfer;

import java.util.List;
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
 * The Authorize round trip alone (issue 13): the requester's gRPC call over loopback, the source's checks, the
 * pins of {@code blocks} DRAM blocks, the answer decoded into a grant. Released outside the timed op.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class AuthorizeBenchmark {
    @Param({"1", "128"})
    int blocks;

    /**
     * Where the source's handlers run (issue 24 item 4): {@code event-loop} as the Manager wires it
     * ({@code PeerListener.addInlineService}), {@code executor} on grpc-java's default executor (the wiring before).
     * The requester always completes the answer on its event loop ({@code Engine.authorize}).
     */
    @Param({"event-loop", "executor"})
    String calls;

    private BenchSource source;
    private Grant last;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        source = new BenchSource(4096, blocks, NativeIo.detect(), calls.equals("event-loop"));
    }

    @TearDown(Level.Invocation)
    public void release() {
        TransferFixture.await(source.f.engine.release(last));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        source.close();
    }

    @Benchmark
    public Grant authorize() {
        last = source.f.grant(List.copyOf(source.refs));
        return last;
    }
}
