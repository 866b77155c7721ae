package orbitkv.server.tier;

import java.io.IOException;

/**
 * This host's resources refuse the start of a Manager (issue 20 items 1 and 4): its SSD directory is held by
 * another live Manager, or its configured bounds do not fit the JVM's heap or direct-memory limit. The
 * message names the holder or the options to change; nothing was modified.
 */
public final class LocalResourceRefused extends IOException {
    public LocalResourceRefused(String message) {
        super(message);
    }
}
