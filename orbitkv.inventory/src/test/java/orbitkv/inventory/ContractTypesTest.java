package orbitkv.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import orbitkv.testing.SeededTries;

@Tag("unit")
class ContractTypesTest {
    @Test
    @DisplayName("namespace bounds: 1..255 bytes, message names the field and the bound")
    void namespaceBounds() {
        assertThatThrownBy(() -> new Namespace(new byte[0])).hasMessageContaining("namespace must be 1..255 bytes");
        assertThatThrownBy(() -> new Namespace(new byte[256])).hasMessageContaining("got 256");
        assertThat(new Namespace(new byte[255]).length()).isEqualTo(255);
    }

    @Test
    @DisplayName("state key order is unsigned lexicographic (0xff sorts after 0x01)")
    void unsignedOrder() {
        Namespace ns = Namespace.utf8("a");
        assertThat(new StateKey(ns, new byte[] {(byte) 0xff})).isGreaterThan(new StateKey(ns, new byte[] {1}));
        assertThat(new StateKey(ns, new byte[] {1})).isLessThan(new StateKey(ns, new byte[] {1, 0}));
        assertThatThrownBy(() -> new StateKey(ns, new byte[65])).hasMessageContaining("state key must be 1..64 bytes");
    }

    @Test
    @DisplayName("SES-8 an explicit empty scope subscribes to nothing")
    void emptyScope() {
        assertThat(Scope.none().contains(Namespace.utf8("x"))).isFalse();
        assertThat(Scope.all().contains(Namespace.utf8("x"))).isTrue();
        assertThat(Scope.none().digest()).isNotEqualTo(Scope.all().digest());
    }

    @Test
    @DisplayName("SES-7 canonicalization: unsorted input with duplicates gives the sorted unique digest")
    void canonicalScope() {
        Namespace a = Namespace.utf8("a");
        Namespace b = Namespace.utf8("b");
        assertThat(Scope.of(List.of(b, a, b)).digest()).isEqualTo(Scope.of(List.of(a, b)).digest());
        assertThatThrownBy(() -> new Scope.NamespaceList(List.of(b, a))).hasMessageContaining("sorted and unique");
    }

    @Test
    @DisplayName("SES-9 interval length never overflows (200 seeded tries)")
    void intervalLengthNeverOverflows() {
        SeededTries.run("intervalLengthNeverOverflows", 200, SeededTries.freshBaseSeed(),
                g -> new long[] {g.longIn(0, Long.MAX_VALUE), g.longIn(0, Long.MAX_VALUE)}, fe -> {
                    long from = fe[0];
                    long extra = fe[1];
                    long to = extra > Long.MAX_VALUE - from ? Long.MAX_VALUE : from + extra;
                    Interval i = Interval.of(from, to);
                    assertThat(i.length()).isEqualTo(to - from).isNotNegative();
                });
    }

    @Test
    @DisplayName("SES-9 interval extension refuses to overflow")
    void intervalOverflow() {
        assertThatThrownBy(() -> Interval.of(0, Long.MAX_VALUE).extendBy(1)).isInstanceOf(ArithmeticException.class);
    }
}
