package orbitkv.transfer.source;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One answer a source served on a data connection, as a flight-recorder event (issue 37 item 5: the source's share of
 * a peer restore). Off unless a recording enables it ({@code +orbitkv.DataServe#enabled=true}); when off,
 * {@link #start} costs one flag check and returns null. The event's duration runs from the decoded frame to the
 * answer's write completing (its bytes handed to the kernel), on the connection's event loop.
 */
@Name("orbitkv.DataServe")
@Label("Data Serve")
@Category({"OrbitKV", "Transfer"})
@Description("A READ or AUTHORIZE a source answered on a data connection, with its stages")
@Enabled(false)
@StackTrace(false)
final class DataServeEvent extends Event {
    @Label("Kind")
    @Description("READ or AUTHORIZE")
    String kind;

    @Label("Payload")
    @DataAmount(DataAmount.BYTES)
    long payloadBytes;

    @Label("Prepare")
    @Description("From the decoded frame to the answer handed to the channel (grant lookup or decision, pin, header)")
    @Timespan(Timespan.NANOSECONDS)
    long prepareNanos;

    @Label("Write")
    @Description("From the answer handed to the channel to its write completing")
    @Timespan(Timespan.NANOSECONDS)
    long writeNanos;

    @Label("Written")
    boolean written;

    private transient long startNanos;
    private transient long handedOutNanos;

    /** A started event for a frame of {@code kind} decoded now, or null when no recording enabled it. */
    static DataServeEvent start(String kind) {
        DataServeEvent e = new DataServeEvent();
        if (!e.isEnabled()) {
            return null;
        }
        e.begin();
        e.kind = kind;
        e.startNanos = System.nanoTime();
        return e;
    }

    /** The answer of {@code bytes} payload bytes was handed to the channel now. */
    void handedOut(long bytes) {
        payloadBytes = bytes;
        handedOutNanos = System.nanoTime();
        prepareNanos = handedOutNanos - startNanos;
    }

    /** The answer's write completed now ({@code ok} false: it failed). */
    void written(boolean ok) {
        writeNanos = System.nanoTime() - handedOutNanos;
        written = ok;
        commit();
    }
}
