package orbitkv.server.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import orbitkv.testing.SeededTries;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ExtentAllocatorTest {
    @Test
    @DisplayName("freeing neighbours coalesces them; fragmentation can refuse a request smaller than the free total")
    void fragmentationAndCoalescing() {
        ExtentAllocator a = new ExtentAllocator(16 * 64);
        long[] offsets = new long[16];
        for (int i = 0; i < 16; i++) {
            offsets[i] = a.allocate(64);
        }
        assertThat(a.allocate(64)).isEqualTo(-1);
        for (int i = 0; i < 16; i += 2) {
            a.free(offsets[i], 64);
        }
        assertThat(a.freeBytes()).isEqualTo(512);
        assertThat(a.freeExtentCount()).isEqualTo(8);
        assertThat(a.largestFreeExtentBytes()).isEqualTo(64);
        assertThat(a.allocate(128)).as("512 bytes free but no two adjacent").isEqualTo(-1);
        a.free(offsets[1], 64);
        assertThat(a.freeExtentCount()).as("[0..192) merged from three extents").isEqualTo(7);
        assertThat(a.allocate(192)).isZero();
    }

    @Test
    @DisplayName("double free and out-of-arena extents are refused")
    void misuse() {
        ExtentAllocator a = new ExtentAllocator(256);
        long off = a.allocate(128);
        a.free(off, 128);
        assertThatThrownBy(() -> a.free(off, 128)).isInstanceOf(IllegalStateException.class).hasMessageContaining("double free");
        assertThatThrownBy(() -> a.free(256, 64)).isInstanceOf(IllegalStateException.class).hasMessageContaining("outside");
        assertThatThrownBy(() -> a.allocate(10)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("INV-9 random allocate/free never overlaps, never loses bytes, and coalesces fully when empty (300 seeded tries)")
    void randomAllocateFree() {
        SeededTries.run("randomAllocateFree", 300, 7L, g -> g.list(0, 200, x -> x.intIn(0, 20)), ExtentAllocatorTest::randomAllocateFree);
    }

    private static void randomAllocateFree(List<Integer> ops) {
        ExtentAllocator a = new ExtentAllocator(64 * 64);
        List<long[]> held = new ArrayList<>();
        for (int op : ops) {
            if (op < 12) {
                long len = ExtentAllocator.extentBytes(op * 50L + 1);
                long off = a.allocate(len);
                if (off >= 0) {
                    for (long[] h : held) {
                        assertThat(off + len <= h[0] || h[0] + h[1] <= off).as("no overlap").isTrue();
                    }
                    held.add(new long[] {off, len});
                }
            } else if (!held.isEmpty()) {
                long[] h = held.remove(op % held.size());
                a.free(h[0], h[1]);
            }
            long heldBytes = held.stream().mapToLong(h -> h[1]).sum();
            assertThat(a.freeBytes() + heldBytes).isEqualTo(a.capacityBytes());
        }
        for (long[] h : held) {
            a.free(h[0], h[1]);
        }
        assertThat(a.freeExtentCount()).isEqualTo(1);
        assertThat(a.largestFreeExtentBytes()).isEqualTo(a.capacityBytes());
    }
}
