package orbitkv.conformance.campaign;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import orbitkv.conformance.manager.ManagerApi;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The campaign sampler is honest (issue 34 item 7): on injected answers, a 500 from a live Manager is an
 * ANSWERS violation (it used to be swallowed with the sample count still growing), a dead node's failure is an
 * aborted sample by cause, a named 4xx refusal is aborted as refused, and a schedule that judged fewer samples
 * than the minimum fails.
 */
@Tag("unit")
class CampaignSamplerTest {
    private static final String STATUS = "{\"self\": {\"incarnation\": \"inc-r\"}, \"membership\": {\"valid\": true},"
            + " \"coverage\": \"CompleteAtWatermarks\", \"owners\": []}";
    private static final String QUERY = "{\"coverage\": \"CompleteAtWatermarks\", \"candidates\": []}";

    /** A node answering from a script of replies (or throwing, when a reply is null), live while {@code live}. */
    private static final class Scripted implements Sampled {
        private final String name;
        private final Deque<Supplier<ManagerApi.Reply>> replies = new ArrayDeque<>();
        boolean live = true;

        Scripted(String name) {
            this.name = name;
        }

        Scripted then(int status, String body) {
            replies.add(() -> new ManagerApi.Reply(status, body.getBytes(StandardCharsets.UTF_8), Map.of()));
            return this;
        }

        Scripted thenNoAnswer() {
            replies.add(() -> {
                throw new java.io.UncheckedIOException(new java.net.ConnectException("Connection refused"));
            });
            return this;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String incarnation() {
            return "inc-" + name;
        }

        @Override
        public ManagerApi.Reply status() {
            return replies.remove().get();
        }

        @Override
        public ManagerApi.Reply query(List<String> keys) {
            return replies.remove().get();
        }

        @Override
        public boolean live() {
            return live;
        }
    }

    private final Violations violations = new Violations();
    private final Checks checks = new Checks(null, Map.of("s", new SourceModel("s"), "r", new SourceModel("r")), violations);

    @Test
    @DisplayName("a live Manager answering 500 to its status is an ANSWERS violation, not a dropped sample")
    void fiveHundredFromLiveNodeIsViolation() {
        Scripted r = new Scripted("r").then(500, "{\"error\": \"INTERNAL\"}");
        checks.sample(r, new Scripted("s").then(200, STATUS));
        assertThat(violations.summary()).contains("answers=1");
        assertThat(violations.details()).contains("live r answered 500");
        assertThat(checks.tally.judgedCount()).isEqualTo(1);
    }

    @Test
    @DisplayName("a 503 to the query from a live requester between two good statuses is a violation too")
    void fiveHundredThreeToQueryIsViolation() {
        Scripted r = new Scripted("r").then(200, STATUS).then(503, "{\"error\": \"METADATA_UNAVAILABLE\"}").then(200, STATUS);
        checks.sample(r, new Scripted("s").then(200, STATUS));
        assertThat(violations.summary()).contains("answers=1");
    }

    @Test
    @DisplayName("a killed node's failure aborts the sample as node-down, with no violation")
    void deadNodeAbortsByCause() {
        Scripted r = new Scripted("r").then(500, "");
        r.live = false;
        checks.sample(r, new Scripted("s"));
        Scripted silent = new Scripted("r").thenNoAnswer();
        silent.live = false;
        checks.sample(silent, new Scripted("s"));
        assertThat(violations.total()).isZero();
        assertThat(checks.tally.abortedCount(SampleTally.Cause.NODE_DOWN)).isEqualTo(2);
        assertThat(checks.tally.judgedCount()).isZero();
    }

    @Test
    @DisplayName("a live node's transport failure and a 429 refusal are aborted by their own causes")
    void noAnswerAndRefusalAreCounted() {
        checks.sample(new Scripted("r").thenNoAnswer(), new Scripted("s"));
        checks.sample(new Scripted("r").then(429, "{\"error\": \"TOO_MANY_REQUESTS_IN_FLIGHT\"}"), new Scripted("s"));
        assertThat(violations.total()).isZero();
        assertThat(checks.tally.abortedCount(SampleTally.Cause.NO_ANSWER)).isEqualTo(1);
        assertThat(checks.tally.abortedCount(SampleTally.Cause.REFUSED)).isEqualTo(1);
        assertThat(checks.tally.summary()).isEqualTo("samples=0 aborted={node-down=0,no-answer=1,refused=1,requester-healed=0}");
    }

    @Test
    @DisplayName("good answers are judged and counted")
    void goodAnswersAreJudged() {
        checks.sample(new Scripted("r").then(200, STATUS).then(200, QUERY).then(200, STATUS),
                new Scripted("s").then(200, STATUS));
        assertThat(violations.total()).isZero();
        assertThat(checks.tally.judgedCount()).isEqualTo(1);
        assertThat(checks.tally.shortfall(1)).isNull();
    }

    @Test
    @DisplayName("a schedule that judged fewer samples than the minimum fails, naming the counts by cause")
    void tooFewJudgedFails() {
        checks.sample(new Scripted("r").thenNoAnswer(), new Scripted("s"));
        assertThat(checks.tally.shortfall(FaultCampaign.MIN_JUDGED_SAMPLES_DEFAULT))
                .isEqualTo("judged 0 samples, fewer than the minimum 1 (orbitkv.campaign.min-judged-samples); "
                        + "samples=0 aborted={node-down=0,no-answer=1,refused=0,requester-healed=0}");
        assertThat(checks.tally.shortfall(0)).isNull();
    }
}
