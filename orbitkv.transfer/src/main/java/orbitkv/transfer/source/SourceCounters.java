package orbitkv.transfer.source;

import java.util.concurrent.atomic.AtomicLong;
import orbitkv.transfer.DataConnectionRefusal;
import orbitkv.transfer.DataConnectionTimeout;
import orbitkv.transfer.DataReadPause;
import orbitkv.transfer.DataRefusal;
import orbitkv.transfer.GrantEnd;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.PeerRouteClass;
import orbitkv.transfer.frame.EnumCounter;

/** The source's counters, one per closed label. */
final class SourceCounters {
    final AtomicLong grantsIssued = new AtomicLong();
    final EnumCounter<GrantEnd> grantsEnded = new EnumCounter<>(GrantEnd.class);
    /** Sends in flight cut (their data connection closed) because their grant ended, by that end. */
    final EnumCounter<GrantEnd> sendsCut = new EnumCounter<>(GrantEnd.class);
    final EnumCounter<RefusalReason> refusals = new EnumCounter<>(RefusalReason.class);
    final EnumCounter<DataRefusal> dataRefusals = new EnumCounter<>(DataRefusal.class);
    final EnumCounter<PeerRouteClass> readsServed = new EnumCounter<>(PeerRouteClass.class);
    final EnumCounter<PeerRouteClass> bytesServed = new EnumCounter<>(PeerRouteClass.class);
    final AtomicLong dataConnections = new AtomicLong();
    /** Data connections closed as soon as they were accepted, by bound (issue 33). */
    final EnumCounter<DataConnectionRefusal> dataConnectionRefusals = new EnumCounter<>(DataConnectionRefusal.class);
    /** Data connections closed by a deadline, by deadline. */
    final EnumCounter<DataConnectionTimeout> dataConnectionTimeouts = new EnumCounter<>(DataConnectionTimeout.class);
    /** Times a data connection stopped reading its socket (backpressure), by cause. */
    final EnumCounter<DataReadPause> dataReadPauses = new EnumCounter<>(DataReadPause.class);
    /** AUTHORIZE frames answered on the data channel (issue 37 item 5), refusals included. */
    final AtomicLong dataAuthorizes = new AtomicLong();
    /** Failed accepts on the data listener (file descriptors exhausted, ...). */
    final AtomicLong dataAcceptFailures = new AtomicLong();
}
