package orbitkv.inventory.session;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/** The one timer thread a session end makes for itself when no {@code ProtocolClock} is handed in. */
final class SessionTimers {
    private SessionTimers() {}

    /** One daemon thread; cancelled wake-ups leave its queue at once, so its queue holds only armed timeouts. */
    static ScheduledExecutorService daemon(String name) {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }
}
