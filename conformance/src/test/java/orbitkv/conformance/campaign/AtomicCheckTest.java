package orbitkv.conformance.campaign;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The campaign's ATOMIC judgement of one sample ({@link Checks#atomicOrUnjudged}) against a {@link SourceModel}
 * that recorded one acknowledged save of key {@code k} (generation 7) at sequence 1: a requester's rows must be
 * the source's state at one sequence between the two watermarks around the query, and a window reaching past
 * what the model has recorded is not judged (campaign regression row 3: the model records a save only once its
 * answer reached the workload thread, and a requester may list it before).
 */
@Tag("unit")
class AtomicCheckTest {
    private static final long SIZE = Workload.size(7);

    private static SourceModel savedAtOne() {
        SourceModel m = new SourceModel("a");
        m.saved(Map.of("k", 7L), Map.of("k", 1L));
        return m;
    }

    @Test
    @DisplayName("DELTA-2 rows equal to the recorded state at a sequence in the window are atomic")
    void recordedStateMatches() {
        assertThat(Checks.atomicOrUnjudged(Map.of(), 0, 0, savedAtOne())).isTrue();
        assertThat(Checks.atomicOrUnjudged(Map.of("k", List.of(1L, SIZE)), 0, 1, savedAtOne())).isTrue();
        assertThat(Checks.atomicOrUnjudged(Map.of(), 0, 1, savedAtOne())).as("state at 0, the window's start").isTrue();
    }

    @Test
    @DisplayName("DELTA-2 rows that are the recorded state at no sequence of the window are a violation")
    void tornRowsAreCaught() {
        assertThat(Checks.atomicOrUnjudged(Map.of("k", List.of(1L, SIZE + 1)), 0, 1, savedAtOne())).isFalse();
        assertThat(Checks.atomicOrUnjudged(Map.of(), 1, 1, savedAtOne())).as("the save at 1 missing from a view at 1").isFalse();
    }

    @Test
    @DisplayName("DELTA-2 a window past the model's last recorded sequence is not judged: the save's answer may still be in flight")
    void windowPastTheRecordedSequenceIsUnjudged() {
        SourceModel nothingRecorded = new SourceModel("a");
        assertThat(Checks.atomicOrUnjudged(Map.of("k", List.of(1L, SIZE)), 0, 1, nothingRecorded)).isTrue();
        assertThat(Checks.atomicOrUnjudged(Map.of("k", List.of(2L, SIZE)), 1, 2, savedAtOne())).isTrue();
    }
}
