package orbitkv.inventory;

/**
 * Outcome of waiting on the source's broadcast sequence signal (DELTA-14): one append wakes every waiter.
 */
public sealed interface AwaitOutcome permits AwaitOutcome.Advanced, AwaitOutcome.TimedOut, AwaitOutcome.WaitersExhausted {
    /** The head is above the sequence the waiter had seen. */
    record Advanced(long headSequence) implements AwaitOutcome {}

    /** The timeout elapsed with the head still at or below the seen sequence. */
    record TimedOut(long headSequence) implements AwaitOutcome {}

    /** Refused: {@code waitersMax} readers are already waiting (INV-9); the caller may poll instead. */
    record WaitersExhausted(int waitersMax) implements AwaitOutcome {}
}
