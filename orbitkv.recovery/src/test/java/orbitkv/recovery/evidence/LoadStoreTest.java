package orbitkv.recovery.evidence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import orbitkv.recovery.LoadSummary;
import orbitkv.recovery.fixtures.Ev;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Load evidence (ROUTE-9): incarnation-tagged, bounded, expired by local receipt age, never a grant. */
@Tag("unit")
class LoadStoreTest {
    private static final long MS = 1_000_000;

    @Test
    @DisplayName("ROUTE-9 a summary expires after its window plus the validity bound of local receipt age")
    void expiry() {
        LoadStore s = new LoadStore(4, 2_000);
        s.record(new LoadSummary(Ev.inc("b"), 100, 3, 1 << 20, 0), 0);
        assertThat(s.get(Ev.inc("b"), 2_100 * MS)).hasValueSatisfying(a -> assertThat(a.ageNanos()).isEqualTo(2_100 * MS));
        assertThat(s.get(Ev.inc("b"), 2_100 * MS + 1)).isEmpty();
        assertThat(s.counters()[3]).isEqualTo(1);
        assertThat(s.size()).isZero();
    }

    @Test
    @DisplayName("ROUTE-9 summaries are tagged with their incarnation: a newer one replaces, an older one is refused")
    void incarnations() {
        LoadStore s = new LoadStore(4, 2_000);
        assertThat(s.record(new LoadSummary(Ev.inc("b", 2), 100, 1, 0, 0), 0)).isEqualTo(LoadSummary.Recorded.ACCEPTED);
        assertThat(s.record(new LoadSummary(Ev.inc("b", 1), 100, 9, 0, 0), 1)).isEqualTo(LoadSummary.Recorded.REFUSED_OLDER_INCARNATION);
        assertThat(s.get(Ev.inc("b", 1), 2)).isEmpty();
        assertThat(s.get(Ev.inc("b", 2), 2)).hasValueSatisfying(a -> assertThat(a.summary().grantsOutstanding()).isEqualTo(1));
        assertThat(s.record(new LoadSummary(Ev.inc("b", 3), 100, 5, 0, 0), 3)).isEqualTo(LoadSummary.Recorded.REPLACED_OLDER_INCARNATION);
        assertThat(s.get(Ev.inc("b", 2), 4)).isEmpty();
        assertThat(s.counters()[1]).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 ROUTE-9 the store is bounded by owners: expired entries go first, then the oldest receipt")
    void bound() {
        LoadStore s = new LoadStore(2, 1);
        s.record(new LoadSummary(Ev.inc("a"), 1, 0, 0, 0), 0);
        s.record(new LoadSummary(Ev.inc("b"), 1, 0, 0, 0), 10 * MS);
        // at 11 ms a has expired (1 ms window + 1 ms validity): it goes, no eviction
        assertThat(s.record(new LoadSummary(Ev.inc("c"), 1, 0, 0, 0), 11 * MS)).isEqualTo(LoadSummary.Recorded.ACCEPTED);
        assertThat(s.record(new LoadSummary(Ev.inc("d"), 1, 0, 0, 0), 11 * MS)).isEqualTo(LoadSummary.Recorded.ACCEPTED_EVICTED_OLDEST);
        assertThat(s.size()).isEqualTo(2);
        assertThat(s.get(Ev.inc("b"), 11 * MS)).isEmpty();
        assertThat(s.counters()).containsExactly(4, 0, 1, 1);
    }

    @Test
    @DisplayName("ROUTE-9 bad summaries are refused at construction")
    void validation() {
        assertThatThrownBy(() -> new LoadSummary(Ev.inc("a"), 0, 0, 0, 0)).hasMessageContaining("window");
        assertThatThrownBy(() -> new LoadSummary(Ev.inc("a"), 100, -1, 0, 0)).hasMessageContaining(">= 0");
    }
}
