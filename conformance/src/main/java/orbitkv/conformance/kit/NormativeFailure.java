package orbitkv.conformance.kit;

/**
 * A failed check of what the design requires inside a policy row (e.g. DELTA-12: an idle session that loops
 * empty ACKs, not merely one that sends an extra ACK). Like anything a row throws it fails the row (RowRunner: a
 * policy row states its permitted difference only as its outcome); the type names the requirement at the throw.
 */
final class NormativeFailure extends AssertionError {
    NormativeFailure(String message) {
        super(message);
    }
}
