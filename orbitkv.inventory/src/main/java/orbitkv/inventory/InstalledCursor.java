package orbitkv.inventory;

import java.util.Objects;
import java.util.UUID;

/**
 * The only legitimate resume point of a session: an installed view and the watermark it is applied
 * through (SNAP-8, SNAP-10). A cursor acknowledged only for staging credit is never one.
 *
 * @param viewId the installed view
 * @param watermark the applied cursor, {@code >= 0}
 */
public record InstalledCursor(UUID viewId, long watermark) {
    public InstalledCursor {
        Objects.requireNonNull(viewId, "installed cursor view id must not be null");
        if (watermark < 0) {
            throw new IllegalArgumentException("installed cursor watermark must be >= 0, got " + watermark);
        }
    }
}
