package orbitkv.inventory;

import java.util.Objects;

/**
 * One residency mutation of one {@code (StateKey, medium)}: a put or a delete, with the residency
 * sequence the source journal assigned to it (DESIGN §4, INV-3). The sequence is the record's own
 * and is distinct from any stream watermark (DELTA-6).
 *
 * @param key the state key
 * @param medium the medium
 * @param op put or delete
 * @param sequence the residency sequence, {@code >= 1}
 * @param sizeBytes payload size for a put ({@code >= 0}); always 0 for a delete
 */
public record ResidenceRecord(StateKey key, Medium medium, Op op, long sequence, long sizeBytes) {
    /** The kind of mutation. */
    public enum Op {
        PUT,
        DELETE
    }

    public ResidenceRecord {
        Objects.requireNonNull(key, "record key must not be null");
        Objects.requireNonNull(medium, "record medium must not be null");
        Objects.requireNonNull(op, "record op must not be null");
        if (sequence < 1) {
            throw new IllegalArgumentException("record sequence must be >= 1, got " + sequence);
        }
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("record size must be >= 0 bytes, got " + sizeBytes);
        }
        if (op == Op.DELETE && sizeBytes != 0) {
            throw new IllegalArgumentException("a delete record carries size 0, got " + sizeBytes);
        }
    }

    public static ResidenceRecord put(StateKey key, Medium medium, long sequence, long sizeBytes) {
        return new ResidenceRecord(key, medium, Op.PUT, sequence, sizeBytes);
    }

    public static ResidenceRecord delete(StateKey key, Medium medium, long sequence) {
        return new ResidenceRecord(key, medium, Op.DELETE, sequence, 0);
    }

    public boolean isDelete() {
        return op == Op.DELETE;
    }

    /** True iff both records are about the same {@code (StateKey, medium)}. */
    public boolean sameResidence(ResidenceRecord other) {
        return medium == other.medium && key.equals(other.key);
    }
}
