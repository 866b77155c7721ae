package orbitkv.conformance.session;

import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import orbitkv.index.GlobalIndex;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.Incarnation;

/**
 * The requester's {@link ViewReceiver}, wrapped so that the oracle is checked at <b>every installed view</b>,
 * not only after convergence (INV-5, SNAP-5, SNAP-10, DELTA-2): after each commit that installs a view and
 * after each delta applied, the index's installed rows of that source must equal the source's journal model
 * at the installed watermark. A snapshot installed before its scan and replay completed, staging rows
 * surviving a disconnect, or a partially applied frame all show up as a difference at that moment. A
 * violation is recorded (the first one) for the test thread to fail on; the session thread is not disturbed.
 */
final class OracleReceiver implements ViewReceiver {
    private final GlobalIndex index;
    private final SessionWorld.RequesterNode requester;
    private final Function<Incarnation, SessionWorld.SourceNode> sources;
    private final AtomicReference<String> violation;
    private final AtomicLong viewsChecked;

    OracleReceiver(GlobalIndex index, SessionWorld.RequesterNode requester, Function<Incarnation, SessionWorld.SourceNode> sources,
            AtomicReference<String> violation, AtomicLong viewsChecked) {
        this.index = index;
        this.requester = requester;
        this.sources = sources;
        this.violation = violation;
        this.viewsChecked = viewsChecked;
    }

    @Override
    public StageOutcome beginStaging(Incarnation source, UUID viewId, ScopeDigest scopeDigest, long s0, long frameNumber) {
        return index.beginStaging(source, viewId, scopeDigest, s0, frameNumber);
    }

    @Override
    public StageOutcome stagePage(Incarnation source, UUID viewId, long pageOrdinal, long frameNumber, RecordBatch records) {
        StageOutcome o = index.stagePage(source, viewId, pageOrdinal, frameNumber, records);
        check(source, "after staging page " + pageOrdinal); // staged rows must not show in the installed view
        return o;
    }

    @Override
    public DeltaOutcome applyDelta(Incarnation source, UUID viewId, long frameNumber, Interval interval, RecordBatch records) {
        DeltaOutcome o = index.applyDelta(source, viewId, frameNumber, interval, records);
        check(source, "after delta " + interval + " (" + o.getClass().getSimpleName() + ")");
        return o;
    }

    @Override
    public CommitOutcome commit(Incarnation source, UUID viewId, CommitMarker marker) {
        CommitOutcome o = index.commit(source, viewId, marker);
        check(source, "after commit at " + marker.s1() + " (" + o.getClass().getSimpleName() + ")");
        return o;
    }

    @Override
    public void discardStaging(Incarnation source, ResetCause cause) {
        index.discardStaging(source, cause);
        check(source, "after discarding staging (" + cause + ")");
    }

    @Override
    public Optional<InstalledCursor> installedCursor(Incarnation source) {
        return index.installedCursor(source);
    }

    @Override
    public void observeLiveness(Incarnation source, long sourceHead) {
        index.observeLiveness(source, sourceHead);
    }

    /** The installed view of {@code source}, if any, equals the model at its watermark (read twice if it moved). */
    private void check(Incarnation source, String when) {
        try {
            checkNow(source, when);
        } catch (RuntimeException | AssertionError e) {
            violation.compareAndSet(null, "oracle check of " + source + " " + when + " failed: " + e);
        }
    }

    private void checkNow(Incarnation source, String when) {
        SessionWorld.SourceNode s = sources.apply(source);
        if (s == null || violation.get() != null) {
            return;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            Optional<InstalledCursor> c = index.installedCursor(source);
            if (c.isEmpty()) {
                return;
            }
            Map<JournalModel.Residence, JournalModel.Generation> actual = SessionWorld.installed(requester, s, true);
            if (actual == null) {
                return; // membership suspended while reading: remote rows are not listed (MEM-9), nothing to compare
            }
            if (!index.installedCursor(source).equals(c)) {
                continue; // moved while reading (a concurrent reset): read again
            }
            Map<JournalModel.Residence, JournalModel.Generation> expected = s.model.stateAt(c.get().watermark(), requester.scope);
            viewsChecked.incrementAndGet();
            if (!expected.equals(actual)) {
                Map<JournalModel.Residence, JournalModel.Generation> again = SessionWorld.installed(requester, s, true);
                Optional<InstalledCursor> now = index.installedCursor(source);
                if (again == null) {
                    return; // suspended between the reads: the first read may have straddled the suspension
                }
                when += "; read again at " + now + ": " + (again.equals(expected) ? "now equal" : again.size() + " rows")
                        + "; owner status " + index.ownerStatus(8, Optional.empty());
                violation.compareAndSet(null, "installed view " + c.get() + " of " + source + " at " + requester.incarnation.nodeId()
                        + " " + when + " differs from the journal model: expected " + expected.size() + " rows, got " + actual.size()
                        + "; expected " + expected + ", got " + actual);
            }
            return;
        }
    }
}
