package orbitkv.recovery.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import orbitkv.recovery.cost.Observation;
import orbitkv.recovery.Prediction;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** ROUTE-6: a shadow prediction can never be recorded as an observation: the types forbid it. */
@Tag("unit")
class ObservationTypeTest {
    @Test
    @DisplayName("ROUTE-6 Observation is sealed to the executor's class, which has no public constructor")
    void sealed() {
        assertThat(Observation.class.isSealed()).isTrue();
        assertThat(Observation.class.getPermittedSubclasses()).containsExactly(ExecutedObservation.class);
        assertThat(Modifier.isFinal(ExecutedObservation.class.getModifiers())).isTrue();
        assertThat(Arrays.stream(ExecutedObservation.class.getDeclaredConstructors()).map(Constructor::getModifiers))
                .allMatch(m -> !Modifier.isPublic(m) && !Modifier.isProtected(m));
        assertThat(Observation.class.isAssignableFrom(Prediction.class)).isFalse();
        assertThat(ExecutedObservation.class.getPackageName()).isEqualTo("orbitkv.recovery.exec");
        assertThat(Observation.class.getModule().isExported("orbitkv.recovery.exec")).isFalse();
    }
}
