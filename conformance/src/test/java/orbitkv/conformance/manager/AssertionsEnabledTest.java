package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 34 item 8: the hot-path invariants are Java {@code assert}s (byte budgets, pins, credits never below 0), so
 * they check something only where assertions are on: in every test JVM (surefire) and in every Manager a test starts.
 */
@Tag("unit")
class AssertionsEnabledTest {
    @Test
    @DisplayName("INV-9 BND-1 the test JVM runs with assertions, and every test-launched Manager gets -ea")
    void assertionsOnInTestsAndChildManagers() {
        boolean on = false;
        assert on = true; // only with -ea
        assertThat(on).as("surefire runs the tests with -ea").isTrue();
        assertThat(ManagerProcess.launchCommand()).as("the child Manager JVM's options").contains("-ea");
        assertThat(ManagerProcess.launchCommand().indexOf("-ea"))
                .as("a JVM option, before the main module").isLessThan(ManagerProcess.launchCommand().indexOf("-m"));
    }
}
