package orbitkv.membership.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.testing.TableRows;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Runs fence-deadline.table: the conservative deadline on an injected monotonic clock (MEM-8, INV-7). */
@Tag("unit")
class FenceDeadlineTableTest {
    private static final long MS = 1_000_000L;

    @TestFactory
    @DisplayName("MEM-8 INV-7 fence deadline table")
    List<DynamicTest> table() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        for (TableRows.Row row : TableRows.read("fence-deadline.table",
                getClass().getResourceAsStream("fence-deadline.table"), TableRows.WHITESPACE, 5)) {
            tests.add(DynamicTest.dynamicTest(row.name(), () -> runRow(row.columns().toArray(String[]::new))));
        }
        assertThat(tests).hasSizeGreaterThanOrEqualTo(12);
        return tests;
    }

    private static void runRow(String[] f) {
        long ttl = Long.parseLong(f[0]);
        long margin = Long.parseLong(f[1]);
        AtomicLong now = new AtomicLong(1_000_000_000_000L); // arbitrary origin: nanoTime may be anything
        long origin = now.get();
        FenceDeadline d = new FenceDeadline(now::get, origin, ttl, margin);
        if (!f[2].equals("-")) {
            for (String c : f[2].split(",")) {
                String[] p = c.split(":");
                d.confirm(origin + Long.parseLong(p[0]) * MS, Long.parseLong(p[1]));
            }
        }
        now.set(origin + Long.parseLong(f[3]) * MS);
        assertThat(d.passed() ? "FENCED" : "LIVE").isEqualTo(f[4]);
    }

    @Test
    @DisplayName("MEM-8 the deadline survives nanoTime wrap-around (comparisons by difference)")
    void wrapAround() {
        AtomicLong now = new AtomicLong(Long.MAX_VALUE - 5 * MS);
        FenceDeadline d = new FenceDeadline(now::get, now.get(), 15_000, 3_000);
        now.addAndGet(11_999 * MS); // overflows into negative values
        assertThat(d.passed()).isFalse();
        now.addAndGet(MS);
        assertThat(d.passed()).isTrue();
    }

    @Test
    @DisplayName("MEM-8 a margin not below the granted TTL is refused naming both")
    void marginBound() {
        assertThatThrownBy(() -> new FenceDeadline(() -> 0, 0, 3_000, 3_000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence safety margin (3000 ms)").hasMessageContaining("granted TTL (3000 ms)");
    }
}
