package orbitkv.conformance.baseline;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The stored cursor of one owner's block publisher (PUB-2, PUB-3): {@code covered} is the input sequence
 * through which every mutation is acknowledged by etcd; {@code op} is the operation counter that every
 * transaction advances by one under compare-and-swap; while a window {@code (windowFrom, windowTo]} is
 * split over several transactions, {@code chunksDone} of {@code chunksTotal} have committed and
 * {@code covered} stays at the previous fully covered sequence until the last one commits.
 */
public record PublisherCursor(long covered, long op, long windowFrom, long windowTo, int chunksDone, int chunksTotal) {
    private static final Pattern TEXT = Pattern.compile(
            "v1 covered=(\\d+) op=(\\d+) window=(\\d+)-(\\d+) chunks=(\\d+)/(\\d+)");

    /** No transaction yet (no cursor key). */
    public static final PublisherCursor INITIAL = new PublisherCursor(0, 0, 0, 0, 0, 0);

    public PublisherCursor {
        if (covered < 0 || op < 0 || windowFrom < 0 || windowTo < windowFrom || chunksDone < 0 || chunksDone > chunksTotal) {
            throw new IllegalArgumentException("inconsistent publisher cursor: covered=" + covered + " op=" + op
                    + " window=" + windowFrom + "-" + windowTo + " chunks=" + chunksDone + "/" + chunksTotal);
        }
        if (chunksDone < chunksTotal && covered != windowFrom) {
            throw new IllegalArgumentException("a window in progress keeps the previous covered cursor: covered="
                    + covered + " window from " + windowFrom);
        }
    }

    /** Whether a multi-transaction window is in progress (PUB-3). */
    public boolean inWindow() {
        return chunksDone < chunksTotal;
    }

    public String encode() {
        return "v1 covered=" + covered + " op=" + op + " window=" + windowFrom + "-" + windowTo + " chunks=" + chunksDone
                + "/" + chunksTotal;
    }

    public static PublisherCursor parse(String text) {
        Matcher m = TEXT.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("malformed publisher cursor: " + text);
        }
        return new PublisherCursor(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                Long.parseLong(m.group(4)), Integer.parseInt(m.group(5)), Integer.parseInt(m.group(6)));
    }
}
