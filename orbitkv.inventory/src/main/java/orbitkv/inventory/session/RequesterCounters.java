package orbitkv.inventory.session;

import java.util.concurrent.atomic.LongAdder;
import orbitkv.inventory.RequesterSessionMetrics;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.source.SecondsRecorder;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;

/**
 * The requester end's counters (DIAG-3), shared by the sessions of one {@link Subscriber}; every field is a
 * thread-safe adder (gRPC threads, the ACK timer and the scraper touch them), bounded by the enums that key
 * them. They leave only as a {@link RequesterSessionMetrics} snapshot.
 */
final class RequesterCounters {
    final EnumCounter<RequesterFrame.BodyCase> framesSent = new EnumCounter<>(RequesterFrame.BodyCase.class);
    final EnumCounter<SourceFrame.BodyCase> framesReceived = new EnumCounter<>(SourceFrame.BodyCase.class);
    final LongAdder encodedBytes = new LongAdder();
    final LongAdder decodedBytes = new LongAdder();
    final EnumCounter<ErrorCause> rejections = new EnumCounter<>(ErrorCause.class);
    final EnumCounter<ResetCause> resets = new EnumCounter<>(ResetCause.class);
    final LongAdder sessionMismatchDrops = new LongAdder();
    final SecondsRecorder bootstrapSeconds = new SecondsRecorder(SecondsRecorder.DEFAULT_BOUNDS_SECONDS);

    RequesterSessionMetrics snapshot() {
        return new RequesterSessionMetrics(framesSent.snapshot(), framesReceived.snapshot(), encodedBytes.sum(),
                decodedBytes.sum(), rejections.snapshot(), resets.snapshot(), sessionMismatchDrops.sum(),
                bootstrapSeconds.snapshot());
    }
}
