package orbitkv.inventory.source;

/**
 * Outcome of arming a reader's wake-up on the source's broadcast sequence signal (DELTA-14): one append
 * wakes every armed reader. Not a contract: the source end of the session is its only user.
 */
public sealed interface AwaitOutcome permits AwaitOutcome.Advanced, AwaitOutcome.Armed, AwaitOutcome.WaitersExhausted {
    /** The head is already above the sequence the reader had seen: nothing armed, read now. */
    record Advanced(long headSequence) implements AwaitOutcome {}

    /** Armed: the reader's wake-up runs once, at the first append above the seen sequence (or on cancel, never). */
    record Armed(long headSequence) implements AwaitOutcome {}

    /** Refused: {@code waitersMax} readers are already armed (INV-9); the caller polls instead. */
    record WaitersExhausted(int waitersMax) implements AwaitOutcome {}
}
