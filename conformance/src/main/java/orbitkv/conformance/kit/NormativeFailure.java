package orbitkv.conformance.kit;

/**
 * A failed check of what the design requires inside a policy row (e.g. DELTA-12: an idle session that loops
 * empty ACKs, not merely one that sends an extra ACK): it fails the row even though the row's expected
 * outcome is only this implementation's choice.
 */
final class NormativeFailure extends AssertionError {
    NormativeFailure(String message) {
        super(message);
    }
}
