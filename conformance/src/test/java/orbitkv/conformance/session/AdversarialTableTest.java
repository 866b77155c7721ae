package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import orbitkv.conformance.kit.InProcessTable;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs {@code tables/session/adversarial.table} in-process (issue 34 item 6): every row is executed by the
 * conformance kit's own scenario classes (the crafted traffic, the wire reading and the checks of
 * {@code orbitkv conformance}) against a fresh in-process target built from InventorySource, InventorySessionServer,
 * InventorySubscriber and GlobalIndex ({@link InProcessTable}). Each row must pass: its outcome is the expected one and
 * the kit's checks hold (no state changed: the source's head, the refused session gone, the requester's installed view
 * id, watermark and rows). A {@code may:} row must take this implementation's choice (POLICY-PASS), as before.
 */
@Tag("gate")
class AdversarialTableTest {
    @TestFactory
    Stream<DynamicTest> table() {
        return InProcessTable.rows().stream().map(r -> DynamicTest.dynamicTest(r.name(), () -> {
            InProcessTable.Result result = InProcessTable.run(r);
            assertThat(result.passed()).as(r.name() + ": " + result).isTrue();
        }));
    }
}
