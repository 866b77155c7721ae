package orbitkv.inventory;

import java.util.Objects;
import java.util.UUID;

/** What a {@link ViewReceiver} did with a {@link CommitMarker} (SNAP-5, SNAP-7). */
public sealed interface CommitOutcome {
    /**
     * The staging view became the installed view at {@code watermark} in one transition.
     *
     * @param viewId the installed view
     * @param watermark S1
     * @param rows live rows of the installed view
     */
    record Installed(UUID viewId, long watermark, long rows) implements CommitOutcome {
        public Installed {
            Objects.requireNonNull(viewId, "installed view id must not be null");
            if (watermark < 0 || rows < 0) {
                throw new IllegalArgumentException("installed watermark and rows must be >= 0");
            }
        }
    }

    /** Refused; the staging attempt is discarded and the installed view (if any) is unchanged. */
    record Rejected(RejectReason reason) implements CommitOutcome {
        public Rejected {
            Objects.requireNonNull(reason, "reject reason must not be null");
        }
    }
}
