package orbitkv.conformance.perf;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * This JVM's garbage-collection pauses while open, on the {@link System#nanoTime()} axis, so a harness can say how many
 * of its slow samples overlapped a pause (issue 37: where the stream's p99 goes). The collectors' notifications carry
 * start and duration in milliseconds since JVM start; the mapping to {@code nanoTime} is taken once, so an interval is
 * exact to about a millisecond and overlaps are judged with {@link #SLACK_NANOS} on both sides. At most
 * {@link #PAUSES_MAX} pauses are kept; later ones are counted in {@link #dropped()}, never silently lost.
 */
final class GcPauses implements AutoCloseable {
    static final int PAUSES_MAX = 100_000;
    static final long SLACK_NANOS = 2_000_000L;

    private final long nanoAtJvmStart;
    private final List<long[]> pauses = new ArrayList<>();
    private final List<NotificationEmitter> emitters = new ArrayList<>();
    private final NotificationListener listener = this::onNotification;
    private long dropped;

    GcPauses() {
        nanoAtJvmStart = System.nanoTime() - ManagementFactory.getRuntimeMXBean().getUptime() * 1_000_000L;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter e) {
                e.addNotificationListener(listener, null, null);
                emitters.add(e);
            }
        }
    }

    private void onNotification(Notification n, Object handback) {
        if (!"com.sun.management.gc.notification".equals(n.getType()) || !(n.getUserData() instanceof CompositeData info)) {
            return;
        }
        if (String.valueOf(info.get("gcAction")).contains("concurrent") && !String.valueOf(info.get("gcAction")).contains("pause")) {
            return; // a concurrent phase, not a pause
        }
        CompositeData gc = (CompositeData) info.get("gcInfo");
        long start = nanoAtJvmStart + (Long) gc.get("startTime") * 1_000_000L;
        long end = start + (Long) gc.get("duration") * 1_000_000L;
        synchronized (pauses) {
            if (pauses.size() < PAUSES_MAX) {
                pauses.add(new long[] {start, end});
            } else {
                dropped++;
            }
        }
    }

    /** Pauses that overlap {@code [fromNs, toNs]}: {count, summed nanos, longest nanos}. */
    long[] within(long fromNs, long toNs) {
        long[] out = new long[3];
        synchronized (pauses) {
            for (long[] p : pauses) {
                if (p[1] >= fromNs && p[0] <= toNs) {
                    out[0]++;
                    out[1] += p[1] - p[0];
                    out[2] = Math.max(out[2], p[1] - p[0]);
                }
            }
        }
        return out;
    }

    /** Whether {@code [startNs, endNs]} overlaps a pause, widened by {@link #SLACK_NANOS} on both sides. */
    boolean overlaps(long startNs, long endNs) {
        synchronized (pauses) {
            for (long[] p : pauses) {
                if (p[1] + SLACK_NANOS >= startNs && p[0] - SLACK_NANOS <= endNs) {
                    return true;
                }
            }
        }
        return false;
    }

    long dropped() {
        synchronized (pauses) {
            return dropped;
        }
    }

    @Override
    public void close() {
        for (NotificationEmitter e : emitters) {
            try {
                e.removeNotificationListener(listener);
            } catch (ListenerNotFoundException ignored) {
                // never added: nothing to remove
            }
        }
    }
}
