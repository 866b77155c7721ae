package orbitkv.inventory.session;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.inventory.SourceSessionMetrics;
import orbitkv.inventory.source.SecondsRecorder;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;

/**
 * The source end's counters (DIAG-3), shared by the sessions of one {@link SessionServer}; every field is
 * a thread-safe adder or atomic (pumps, gRPC threads and the scraper touch them), bounded by the enums
 * that key them. They leave only as a {@link SourceSessionMetrics} snapshot.
 */
final class SourceCounters {
    final EnumCounter<SourceFrame.BodyCase> framesSent = new EnumCounter<>(SourceFrame.BodyCase.class);
    final EnumCounter<RequesterFrame.BodyCase> framesReceived = new EnumCounter<>(RequesterFrame.BodyCase.class);
    final LongAdder encodedBytes = new LongAdder();
    final LongAdder originalMutations = new LongAdder();
    final LongAdder coalescedRecords = new LongAdder();
    final LongAdder snapshotPageBytes = new LongAdder();
    final LongAdder snapshotReplayBytes = new LongAdder();
    final EnumCounter<ErrorCause> rejections = new EnumCounter<>(ErrorCause.class);
    final LongAdder duplicateAcks = new LongAdder();
    final LongAdder sessionMismatchDrops = new LongAdder();
    final SecondsRecorder ackRoundTripSeconds = new SecondsRecorder(SecondsRecorder.DEFAULT_BOUNDS_SECONDS);
    private final AtomicLong peakOutstandingCreditBytes = new AtomicLong();

    void peakCredit(long bytes) {
        peakOutstandingCreditBytes.accumulateAndGet(bytes, Math::max);
    }

    SourceSessionMetrics snapshot() {
        return new SourceSessionMetrics(framesSent.snapshot(), framesReceived.snapshot(), encodedBytes.sum(),
                originalMutations.sum(), coalescedRecords.sum(), snapshotPageBytes.sum(), snapshotReplayBytes.sum(),
                rejections.snapshot(), duplicateAcks.sum(), sessionMismatchDrops.sum(), ackRoundTripSeconds.snapshot(),
                peakOutstandingCreditBytes.get());
    }
}
