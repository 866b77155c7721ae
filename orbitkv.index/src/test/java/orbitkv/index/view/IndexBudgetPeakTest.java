package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class IndexBudgetPeakTest {
    @Test
    @DisplayName("DIAG-3 the index budget keeps its high-water mark across releases; a refused reservation does not raise it")
    void peakIsTheHighWaterMark() {
        IndexBudget b = new IndexBudget(1_000);
        assertThat(b.tryReserve(700)).isTrue();
        b.release(600);
        assertThat(b.tryReserve(200)).isTrue();
        assertThat(b.tryReserve(800)).as("beyond the budget: refused").isFalse();
        assertThat(b.bytesUsed()).isEqualTo(300);
        assertThat(b.bytesPeak()).isEqualTo(700);
        assertThat(b.tryReserve(600)).isTrue();
        assertThat(b.bytesPeak()).isEqualTo(900);
    }
}
