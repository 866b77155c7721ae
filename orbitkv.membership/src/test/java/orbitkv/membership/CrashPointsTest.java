package orbitkv.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Crash points (issue 17 item 1): off by default, armed only by the property, parsed strictly. */
@Tag("unit")
class CrashPointsTest {
    @Test
    @DisplayName("unarmed by default: reaching a point returns; the property parses NAME[@N] lists and refuses unknown names")
    void parsing() {
        assertThat(System.getProperty(CrashPoints.PROPERTY)).isNull();
        assertThat(CrashPoints.armed()).isFalse();
        CrashPoints.reach(CrashPoints.Point.DELTA_SENT); // returns: nothing is armed
        var armed = CrashPoints.parse(" snapshot-page-sent@3, delta-applied ,");
        assertThat(armed).containsOnlyKeys(CrashPoints.Point.SNAPSHOT_PAGE_SENT, CrashPoints.Point.DELTA_APPLIED);
        assertThat(armed.get(CrashPoints.Point.SNAPSHOT_PAGE_SENT)[0]).isEqualTo(3);
        assertThat(armed.get(CrashPoints.Point.DELTA_APPLIED)[0]).isEqualTo(1);
        assertThat(CrashPoints.parse("")).isEmpty();
        assertThatThrownBy(() -> CrashPoints.parse("mid-nowhere")).hasMessageContaining("unknown crash point 'mid-nowhere'");
        assertThatThrownBy(() -> CrashPoints.parse("delta-sent@0")).hasMessageContaining(">= 1");
        assertThatThrownBy(() -> CrashPoints.parse("delta-sent@x")).hasMessageContaining("number");
        for (CrashPoints.Point p : CrashPoints.Point.values()) {
            assertThat(CrashPoints.Point.parse(p.propertyName())).isEqualTo(p);
        }
    }

    @Test
    @DisplayName("the production launcher never arms crash points: no build or launcher file names the property")
    void launcherNeverArms() throws Exception {
        Path root = Path.of(System.getProperty("orbitkv.root", "..")).toAbsolutePath().normalize();
        for (Path p : new Path[] {root.resolve("dist/pom.xml"), root.resolve("orbitkv"), root.resolve("pom.xml")}) {
            if (Files.exists(p)) {
                assertThat(Files.readString(p)).as(p.toString()).doesNotContain(CrashPoints.PROPERTY);
            }
        }
        assertThat(Files.exists(root.resolve("dist/pom.xml"))).as("dist/pom.xml found under " + root).isTrue();
    }
}
