package orbitkv.transfer.requester;

import orbitkv.membership.NodeId;
import orbitkv.transfer.ReadResult;

/**
 * A request the TCP backend sends on a data connection and whose answer it receives in order: a READ of a granted
 * block, or an AUTHORIZE (issue 37 item 5). Both hold a slot of their connection until answered or stopped.
 */
abstract sealed class Exchange permits Read, DataAuthorize {
    /** The payload bytes the slot reserves: a READ's block length; 0 for an AUTHORIZE (its answer is small). */
    final long length;
    final long admittedNanos;
    final long deadlineNanos;
    /** The id the answer must carry (a READ's read id, an AUTHORIZE's request id). */
    final long readId;

    Exchange(long length, long admittedNanos, long deadlineNanos, long readId) {
        this.length = length;
        this.admittedNanos = admittedNanos;
        this.deadlineNanos = deadlineNanos;
        this.readId = readId;
    }

    /** The node the data endpoint must be (under TLS its certificate must name it). */
    abstract NodeId sourceNode();

    /** The one terminal transition; later calls do nothing. Called only once the request physically stopped. */
    abstract void finish(ReadResult o);

    abstract boolean cancelRequested();

    /** Installs how to stop this request; runs it at once if cancel was already asked. */
    abstract void onCancel(Runnable stopper);
}
