package orbitkv.server.http;

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
 * One answered API request, as a flight-recorder event with its stages (issue 37 item 5: where a restore's time goes
 * outside its routes). Off unless a recording enables it ({@code +orbitkv.HttpRequest#enabled=true}); when off,
 * {@link #record} costs one flag check. Committed on the connection's event loop when the answer's write completed.
 */
@Name("orbitkv.HttpRequest")
@Label("HTTP API Request")
@Category({"OrbitKV", "HTTP API"})
@Description("An answered API request: receive, queue, execute and write times")
@Enabled(false)
@StackTrace(false)
final class HttpRequestEvent extends Event {
    @Label("Endpoint")
    String endpoint;

    @Label("Status")
    int status;

    @Label("Answer Size")
    @Description("The answer's body bytes; -1 for a streamed answer")
    @DataAmount(DataAmount.BYTES)
    long answerBytes;

    @Label("Receive")
    @Description("From the request's headers decoded to its last body byte")
    @Timespan(Timespan.NANOSECONDS)
    long receiveNanos;

    @Label("Queue")
    @Description("From the request handed to its virtual thread to the thread running it")
    @Timespan(Timespan.NANOSECONDS)
    long queueNanos;

    @Label("Execute")
    @Description("From the thread running the request to its answer handed to the connection")
    @Timespan(Timespan.NANOSECONDS)
    long executeNanos;

    @Label("Write")
    @Description("From the answer handed to the connection to its write completing")
    @Timespan(Timespan.NANOSECONDS)
    long writeNanos;

    @Label("Written")
    boolean written;

    /** Commits one event for {@code r}, whose answer's write completed now, if a recording enabled it. */
    static void record(InFlightRequest r, boolean written) {
        HttpRequestEvent e = new HttpRequestEvent();
        if (!e.isEnabled()) {
            return;
        }
        long now = System.nanoTime();
        e.endpoint = r.endpoint.label;
        e.status = r.answeredStatus;
        e.answerBytes = r.answeredBytes;
        e.receiveNanos = r.dispatchedNanos - r.headersNanos;
        e.queueNanos = r.executingNanos - r.dispatchedNanos;
        e.executeNanos = r.respondedNanos - r.executingNanos;
        e.writeNanos = now - r.respondedNanos;
        e.written = written;
        e.commit();
    }
}
