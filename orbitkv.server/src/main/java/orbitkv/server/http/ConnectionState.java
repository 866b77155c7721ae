package orbitkv.server.http;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where one HTTP connection is in its request cycle: the handler's one state variable, changed only by
 * {@link #to} (illegal edges throw). Each state owns at most one deadline: IDLE the idle timeout, HEADERS
 * the header deadline, BODY the body progress window, LINGERING the linger bound; EXECUTING reads nothing
 * (a connection executes one request at a time, pipelined ones wait decoded and bounded).
 */
enum ConnectionState {
    /** No request in progress; waiting for the first byte of the next one. */
    IDLE,
    /** The first byte of a request arrived; its line and headers are not complete. */
    HEADERS,
    /** A request was admitted; its body is being received. */
    BODY,
    /** The request is complete and executes; nothing more is read. */
    EXECUTING,
    /** Refused early: the answer is (being) written with {@code Connection: close}; input is discarded, bounded. */
    LINGERING,
    /** Closed; terminal. */
    CLOSED;

    private Set<ConnectionState> next() {
        return switch (this) {
            case IDLE -> EnumSet.of(HEADERS, BODY, LINGERING, CLOSED);
            case HEADERS -> EnumSet.of(BODY, LINGERING, CLOSED);
            case BODY -> EnumSet.of(EXECUTING, LINGERING, CLOSED);
            case EXECUTING -> EnumSet.of(IDLE, CLOSED);
            case LINGERING -> EnumSet.of(CLOSED);
            case CLOSED -> EnumSet.noneOf(ConnectionState.class);
        };
    }

    /** The transition {@code this -> target}; an edge the table does not list is a bug. */
    ConnectionState to(ConnectionState target) {
        if (!next().contains(target)) {
            throw new IllegalStateException("HTTP connection: illegal transition " + this + " -> " + target);
        }
        return target;
    }

    /** True while decoded input may be processed (not executing, not refused, not closed). */
    boolean reading() {
        return this == IDLE || this == HEADERS || this == BODY;
    }
}
