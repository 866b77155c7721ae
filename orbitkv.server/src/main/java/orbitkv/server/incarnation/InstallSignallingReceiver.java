package orbitkv.server.incarnation;

import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.Incarnation;

/**
 * The {@link ViewReceiver} handed to the subscriber sessions: the GlobalIndex, plus a wake-up of the
 * await waiters after every call that can move an installed cursor (a delta applied to an installed view,
 * a commit) or remove one (a staging discard that follows a reset). The GlobalIndex offers no install
 * notification of its own; this decorator is how await is driven by index installs instead of polling
 * (API-4, API-5). It adds no state and never holds a lock across the delegate call (DELTA-4).
 */
final class InstallSignallingReceiver implements ViewReceiver {
    private final ViewReceiver index;
    private final Runnable installed;

    InstallSignallingReceiver(ViewReceiver index, Runnable installed) {
        this.index = Objects.requireNonNull(index, "index");
        this.installed = Objects.requireNonNull(installed, "installed");
    }

    @Override
    public StageOutcome beginStaging(Incarnation source, UUID viewId, ScopeDigest scopeDigest, long s0, long frameNumber) {
        return index.beginStaging(source, viewId, scopeDigest, s0, frameNumber);
    }

    @Override
    public StageOutcome stagePage(Incarnation source, UUID viewId, long pageOrdinal, long frameNumber,
                                  RecordBatch records) {
        return index.stagePage(source, viewId, pageOrdinal, frameNumber, records);
    }

    @Override
    public DeltaOutcome applyDelta(Incarnation source, UUID viewId, long frameNumber, Interval interval,
                                   RecordBatch records) {
        DeltaOutcome outcome = index.applyDelta(source, viewId, frameNumber, interval, records);
        installed.run();
        return outcome;
    }

    @Override
    public CommitOutcome commit(Incarnation source, UUID viewId, CommitMarker marker) {
        CommitOutcome outcome = index.commit(source, viewId, marker);
        installed.run();
        return outcome;
    }

    @Override
    public void discardStaging(Incarnation source, ResetCause cause) {
        index.discardStaging(source, cause);
        installed.run();
    }

    @Override
    public Optional<InstalledCursor> installedCursor(Incarnation source) {
        return index.installedCursor(source);
    }

    @Override
    public void observeLiveness(Incarnation source, long sourceHead) {
        index.observeLiveness(source, sourceHead);
    }
}
