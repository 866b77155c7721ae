package orbitkv.server.tier;

import java.io.IOException;

/**
 * A tier's storage is held by another live Manager (issue 20 item 1): the start is refused; the message names
 * the holder and the option to change. Nothing was modified.
 */
public final class TierLockedException extends IOException {
    public TierLockedException(String message) {
        super(message);
    }
}
