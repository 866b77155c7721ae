package orbitkv.transfer.requester;

import java.util.function.LongSupplier;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import orbitkv.transfer.ReadResult;

/**
 * One answered exchange of a data connection, or one copy from a source's shared-memory arena, as a flight-recorder
 * event (issue 37 item 5: where a peer restore's time goes, stage by stage). Off unless a recording enables it
 * ({@code +orbitkv.DataExchange#enabled=true}); when off, {@link #record} costs one flag check. Committed on the
 * connection's event loop when the answer passed, or on the copy thread when the copy was checked.
 */
@Name("orbitkv.DataExchange")
@Label("Data Exchange")
@Category({"OrbitKV", "Transfer"})
@Description("A READ or AUTHORIZE answered on a data connection, or a READ copied from shared memory, with its stages")
@Enabled(false)
@StackTrace(false)
final class DataExchangeEvent extends Event {
    @Label("Kind")
    @Description("READ or AUTHORIZE on a data connection; READ-SHM copied from a source's shared-memory arena")
    String kind;

    @Label("Payload")
    @DataAmount(DataAmount.BYTES)
    long payloadBytes;

    @Label("Hand-off")
    @Description("From admission by the engine to the event loop sending the request (READ-SHM: to the copy thread starting)")
    @Timespan(Timespan.NANOSECONDS)
    long handoffNanos;

    @Label("Answer Wait")
    @Description("From the request sent to the answer's header received (0 for READ-SHM)")
    @Timespan(Timespan.NANOSECONDS)
    long answerWaitNanos;

    @Label("Body")
    @Description("From the answer's header to its last byte received and checked (READ-SHM: the copy and its check)")
    @Timespan(Timespan.NANOSECONDS)
    long bodyNanos;

    @Label("Outcome")
    String outcome;

    /**
     * Commits one event for {@code p}, whose answer (header included) passed now, if a recording enabled it.
     *
     * @param outcome what the requester delivered ({@code null}: a skipped READ), named by its type
     */
    static void record(TcpReader.Pending p, LongSupplier clock, Object outcome) {
        DataExchangeEvent e = new DataExchangeEvent();
        if (!e.isEnabled()) {
            return;
        }
        long now = clock.getAsLong();
        e.kind = p.read instanceof DataAuthorize ? "AUTHORIZE" : "READ";
        e.payloadBytes = p.payloadBytes();
        e.handoffNanos = p.sentNanos - p.read.admittedNanos;
        e.answerWaitNanos = p.headerNanos - p.sentNanos;
        e.bodyNanos = now - p.headerNanos;
        e.outcome = outcome == null ? "Skipped" : outcome.getClass().getSimpleName();
        e.commit();
    }

    /** Commits one READ-SHM event for {@code read}, copied from {@code startedNanos} until now, if enabled. */
    static void recordCopy(Read read, long startedNanos, LongSupplier clock, ReadResult outcome) {
        DataExchangeEvent e = new DataExchangeEvent();
        if (!e.isEnabled()) {
            return;
        }
        e.kind = "READ-SHM";
        e.payloadBytes = read.length;
        e.handoffNanos = startedNanos - read.admittedNanos;
        e.bodyNanos = clock.getAsLong() - startedNanos;
        e.outcome = outcome.getClass().getSimpleName();
        e.commit();
    }
}
