package orbitkv.server.restore;

import java.util.Locale;
import orbitkv.inventory.Medium;
import orbitkv.recovery.PrefixStop;

/**
 * Request-local notes of one restore for its named stop: the last refusal, a broken local block, a payload failure,
 * whether receive credits or the restore memory refused. Written by the ports (possibly on the engine's threads),
 * read once when the restore ends.
 */
final class RestoreNotes {
    private volatile String lastRefusal;
    private volatile String corrupt;
    private volatile Medium corruptMedium;
    private volatile String failure;
    private volatile boolean receiveCredits;
    private volatile boolean responseMemory;

    void refusal(String traceName) {
        lastRefusal = traceName;
    }

    void corrupt(String reason, Medium medium) {
        corrupt = reason;
        corruptMedium = medium;
    }

    /** A READ failed, timed out or was cancelled. */
    void failure(String name) {
        failure = name;
    }

    /** A READ was refused; {@code receiveCreditsRefused} when by this requester's window (credits, READs, connections). */
    void failure(String name, boolean receiveCreditsRefused) {
        failure = name;
        receiveCredits = receiveCreditsRefused;
    }

    String failure() {
        return failure;
    }

    void responseMemory() {
        responseMemory = true;
    }

    boolean isResponseMemory() {
        return responseMemory;
    }

    /** The stop and its detail, in the API's names (docs/api.md). */
    String stop(PrefixStop stop) {
        return switch (stop) {
            case REJECTED_IN_REQUEST, REPLANS_EXHAUSTED -> {
                if (corrupt != null && corruptMedium != null) {
                    yield "corrupt-" + corruptMedium.name().toLowerCase(Locale.ROOT) + " corrupt=" + corrupt;
                }
                if (responseMemory) {
                    yield "response-memory";
                }
                yield stop.traceName() + (lastRefusal == null ? "" : " refusal=" + lastRefusal);
            }
            case DESTINATION_CAPACITY -> responseMemory ? "response-memory" : stop.traceName();
            case PAYLOAD_FAILURE -> receiveCredits ? "receive-credits refusal=" + failure
                    : "payload-failure failure=" + failure;
            case DEADLINE -> failure != null && failure.equals("timed-out") ? "deadline failure=timed-out" : "deadline";
            default -> stop.traceName();
        };
    }
}
