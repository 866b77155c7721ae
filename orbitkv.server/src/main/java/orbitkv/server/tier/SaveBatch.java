package orbitkv.server.tier;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import orbitkv.inventory.StateKey;

/**
 * One save as it streams in (issue 20 items 3 and 4): records are reserved in the DRAM arena as their
 * headers arrive, filled as their bytes arrive, and become residences all together at {@link #commit()};
 * {@link #abort()} frees everything. All records or none: nothing of a batch is readable, evictable or in
 * the journal before the commit, and a batch that is refused, malformed or cut off stores nothing.
 *
 * <p>Use: {@code reserve(key, n)}, then {@code write(...)} until the record's {@code n} bytes are in, then the
 * next {@code reserve}; finally {@code commit()} or {@code abort()} (also {@link #close()}). One thread at a
 * time (the HTTP event loop fills it, a request thread commits it; the executor hand-off orders them).
 *
 * <p>Side effect of a refused or aborted batch: room made for its reservations was made by ordinary LRU
 * eviction (each eviction a journal delete, counted), which is not undone: a cache may always evict.
 */
public final class SaveBatch implements AutoCloseable {
    private final LocalTiers tiers;
    private final List<DramTier.Reservation> reservations = new ArrayList<>();
    private final Set<StateKey> keys = new HashSet<>();
    private DramTier.Reservation current;
    private boolean finished;

    SaveBatch(LocalTiers tiers) {
        this.tiers = tiers;
    }

    /** The outcome of {@link #commit()}. */
    public sealed interface Outcome {
        /** Every record is resident in DRAM, in batch order (SSD copies are queued). */
        record Stored(List<SaveOutcome.Stored> records) implements Outcome {}

        /** Nothing of the batch was stored. */
        record Refused(SaveOutcome.Refused refusal) implements Outcome {}
    }

    /**
     * Starts the next record: reserves {@code payloadBytes} in the DRAM arena (evicting LRU residences as
     * needed). On a refusal nothing more of this batch can be stored: the caller aborts it.
     *
     * @return null when reserved, else the refusal
     * @throws IllegalStateException if the previous record is not complete, the key repeats within the
     *     batch (the framing refuses duplicates first), or the batch is finished
     */
    public SaveOutcome.Refused reserve(StateKey key, long payloadBytes) {
        Objects.requireNonNull(key, "key");
        requireOpen();
        if (current != null && !current.full()) {
            throw new IllegalStateException("record " + current.key.keyHex() + " is incomplete: "
                    + current.filled + "/" + current.sizeBytes + " bytes");
        }
        if (!keys.add(key)) {
            throw new IllegalStateException("key " + key.keyHex() + " repeats within one save");
        }
        return switch (tiers.dram().reserve(key, payloadBytes)) {
            case DramTier.Reserve.Reserved r -> {
                current = r.reservation();
                reservations.add(current);
                yield null;
            }
            case DramTier.Reserve.Refused r -> r.refusal();
        };
    }

    /**
     * Appends the remaining bytes of {@code chunk} to the current record (consumed).
     *
     * @throws IllegalStateException beyond the record's length, or when the tier closed meanwhile
     */
    public void write(ByteBuffer chunk) {
        requireOpen();
        if (current == null) {
            throw new IllegalStateException("write before reserve");
        }
        tiers.dram().write(current, chunk);
    }

    /** Bytes the current record still lacks (0 before the first reserve). */
    public long remaining() {
        return current == null ? 0 : current.sizeBytes - current.filled;
    }

    /** Records reserved so far. */
    public int records() {
        return reservations.size();
    }

    /**
     * Publishes every record at once (one DRAM lock hold, each a journal put in batch order), then queues
     * the SSD write-through copies (a refused copy is counted by the SSD tier and does not fail the save).
     *
     * @throws IllegalStateException if a record is incomplete or there is none
     */
    public Outcome commit() {
        requireOpen();
        if (reservations.isEmpty() || !current.full()) {
            throw new IllegalStateException("commit needs at least one complete record");
        }
        finished = true;
        return tiers.inOneLineage(this::publish);
    }

    private Outcome publish() {
        List<SaveOutcome> outcomes = tiers.dram().commit(reservations);
        if (outcomes.size() == 1 && outcomes.getFirst() instanceof SaveOutcome.Refused refused) {
            reservations.forEach(tiers.dram()::abort);
            return new Outcome.Refused(refused);
        }
        List<SaveOutcome.Stored> stored = new ArrayList<>(outcomes.size());
        for (int i = 0; i < outcomes.size(); i++) {
            SaveOutcome.Stored s = (SaveOutcome.Stored) outcomes.get(i);
            stored.add(s);
            tiers.writeThrough(reservations.get(i).key, s.sequence());
        }
        orbitkv.membership.CrashPoints.reach(orbitkv.membership.CrashPoints.Point.SAVE_RESIDENT); // off unless armed
        return new Outcome.Stored(stored);
    }

    /** Frees every reservation; nothing of the batch is stored. Idempotent; does nothing after a commit. */
    public void abort() {
        if (finished) {
            return;
        }
        finished = true;
        reservations.forEach(tiers.dram()::abort);
    }

    @Override
    public void close() {
        abort();
    }

    private void requireOpen() {
        if (finished) {
            throw new IllegalStateException("the save batch is already committed or aborted");
        }
    }
}
