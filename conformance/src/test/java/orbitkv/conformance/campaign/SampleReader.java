package orbitkv.conformance.campaign;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.function.Supplier;
import orbitkv.conformance.manager.ManagerApi;

/**
 * Reads one answer of a campaign sample and says why there is none (issue 34 item 7): the JSON of a 200, or an
 * {@link Unjudged} naming the {@link SampleTally.Cause}; a 5xx (or a 200 without JSON) from a node that stayed
 * live is recorded as an {@link Property#ANSWERS} violation, never dropped. {@code ManagerApi.status()} throws an
 * {@link AssertionError} on any non-200, which the sampler used to swallow: this reads the raw reply instead.
 */
final class SampleReader {
    private final Violations violations;

    SampleReader(Violations violations) {
        this.violations = violations;
    }

    /** A sample ends without comparing answers: {@code cause} is why, or null after an ANSWERS violation. */
    static final class Unjudged extends Exception {
        final transient SampleTally.Cause cause;

        Unjudged(SampleTally.Cause cause) {
            super(null, null, false, false);
            this.cause = cause;
        }
    }

    /** The JSON of a 200, else classifies why there is none (the node's liveness is read after the answer). */
    JsonNode answer(String where, Sampled node, Supplier<ManagerApi.Reply> call) throws Unjudged {
        ManagerApi.Reply reply;
        try {
            reply = call.get();
        } catch (RuntimeException noAnswer) {
            throw new Unjudged(node.live() ? SampleTally.Cause.NO_ANSWER : SampleTally.Cause.NODE_DOWN);
        }
        if (reply.status() == 200) {
            try {
                return reply.json();
            } catch (RuntimeException notJson) {
                violations.add(Property.ANSWERS, where + ": " + node.name() + " answered 200 with no JSON: " + notJson);
                throw new Unjudged(null);
            }
        }
        if (!node.live()) {
            throw new Unjudged(SampleTally.Cause.NODE_DOWN);
        }
        if (reply.status() >= 500) {
            violations.add(Property.ANSWERS, where + ": live " + node.name() + " answered " + reply.status() + ": " + reply.text());
            throw new Unjudged(null);
        }
        throw new Unjudged(SampleTally.Cause.REFUSED);
    }

}
