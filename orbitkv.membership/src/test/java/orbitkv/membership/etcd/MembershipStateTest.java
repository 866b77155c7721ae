package orbitkv.membership.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

@Tag("unit")
class MembershipStateTest {
    @ParameterizedTest
    @EnumSource(MembershipState.class)
    @DisplayName("INV-7 FENCED is terminal: no edge leaves it")
    void fencedIsTerminal(MembershipState next) {
        assertThatThrownBy(() -> MembershipState.FENCED.to(next))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("illegal membership transition FENCED -> " + next);
    }

    @ParameterizedTest
    @EnumSource(value = MembershipState.class, names = {"ACTIVE", "SUSPENDED"})
    @DisplayName("MEM-9 ACTIVE and SUSPENDED move between each other and into FENCED")
    void liveStates(MembershipState from) {
        assertThat(from.to(MembershipState.SUSPENDED)).isEqualTo(MembershipState.SUSPENDED);
        assertThat(from.to(MembershipState.ACTIVE)).isEqualTo(MembershipState.ACTIVE);
        assertThat(from.to(MembershipState.FENCED)).isEqualTo(MembershipState.FENCED);
    }
}
