package orbitkv.transfer;

import java.time.Duration;
import orbitkv.transfer.FaultProxy.Fault;
import org.junit.jupiter.api.Tag;

/** The transfer suite on the TCP backend over io_uring (the Manager's first choice). */
@Tag("unit")
class TcpIoUringTransferTest extends AbstractTransferBackendTest {
    @Override
    NativeIo io() {
        return NativeIo.IO_URING;
    }

    @Override
    BackendPolicy policy() {
        return BackendPolicy.TCP_ONLY;
    }

    @Override
    Backend dramBackend() {
        return Backend.TCP;
    }

    @Override
    ReadFailure cutFailure() {
        return ReadFailure.CONNECTION_LOST;
    }

    @Override
    void arm(Fault fault, Duration delay) {
        f.proxy.arm(fault, delay);
    }

    @Override
    void endStall(long deadlineNanos) {
        // the READ's own timeout closes the stalled connection
    }

    @Override
    boolean stallHolding() {
        return f.engine.status().readsInFlight() == 1;
    }
}
