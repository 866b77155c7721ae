package orbitkv.server.http;

import io.netty.channel.ChannelHandlerContext;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The one deadline of a connection's current state ({@link ConnectionState}: header, body progress, linger, idle),
 * scheduled on the connection's event loop. Arming replaces the previous deadline; {@link #cancel()} (at every state
 * change) makes a deadline that already fired late for an old state do nothing. Event-loop confined.
 */
final class ConnectionDeadline {
    private ScheduledFuture<?> pending;
    /** Bumped at each cancel, so a deadline that fires late for an old state does nothing. */
    private long epoch;

    /** Runs {@code onExpiry} after {@code ms}, unless cancelled or re-armed first, and only while {@code live}. */
    void arm(ChannelHandlerContext ctx, BooleanSupplier live, long ms, Runnable onExpiry) {
        cancel();
        long armedAt = epoch;
        pending = ctx.executor().schedule(() -> {
            if (epoch == armedAt && live.getAsBoolean()) {
                onExpiry.run();
            }
        }, ms, TimeUnit.MILLISECONDS);
    }

    void cancel() {
        epoch++;
        if (pending != null) {
            pending.cancel(false);
            pending = null;
        }
    }
}
