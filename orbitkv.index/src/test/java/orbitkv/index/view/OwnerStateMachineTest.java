package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import orbitkv.index.OwnerState;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class OwnerStateMachineTest {
    @Test
    @DisplayName("SNAP-5 SNAP-10 SNAP-12 IDX-13 owner view edges: only the documented transitions exist")
    void edges() {
        assertThatCode(() -> OwnerView.requireEdge(OwnerState.AWAITING, OwnerState.BOOTSTRAPPING)).doesNotThrowAnyException();
        assertThatCode(() -> OwnerView.requireEdge(OwnerState.BOOTSTRAPPING, OwnerState.INSTALLED)).doesNotThrowAnyException();
        assertThatCode(() -> OwnerView.requireEdge(OwnerState.INSTALLED, OwnerState.REPAIRING)).doesNotThrowAnyException();
        assertThatCode(() -> OwnerView.requireEdge(OwnerState.REPAIRING, OwnerState.BOOTSTRAPPING)).doesNotThrowAnyException();
        assertThatCode(() -> OwnerView.requireEdge(OwnerState.WITHDRAWN, OwnerState.BOOTSTRAPPING)).doesNotThrowAnyException();
        // A view is installed only by a commit of a staging view (INV-5).
        assertThatThrownBy(() -> OwnerView.requireEdge(OwnerState.AWAITING, OwnerState.INSTALLED))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("AWAITING -> INSTALLED");
        assertThatThrownBy(() -> OwnerView.requireEdge(OwnerState.WITHDRAWN, OwnerState.INSTALLED))
                .hasMessageContaining("WITHDRAWN -> INSTALLED");
        // A removed incarnation never comes back (INV-7: healing is a new incarnation).
        for (OwnerState to : OwnerState.values()) {
            if (to != OwnerState.REMOVED) {
                assertThatThrownBy(() -> OwnerView.requireEdge(OwnerState.REMOVED, to)).hasMessageContaining("REMOVED -> " + to);
            }
        }
    }
}
