package orbitkv.index.view;

import java.util.Arrays;
import java.util.HashMap;
import orbitkv.inventory.Interval;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;

/**
 * A frame's records decoded into row form and validated <em>before</em> any index lock is taken
 * (DELTA-2, DELTA-4): namespaces in scope, sequences inside the interval (DELTA-1), one record per
 * residence, conflicting same-generation records refused (DELTA-5), pages put-only and strictly ordered
 * (SNAP-2). Either {@link #rejected()} is non-null or the rows are ready to apply.
 *
 * <p>Rows are columns (tag, key, hash, sequence, size), one entry per record; the key arrays are the
 * copies the residence table keeps, so preparing a row allocates exactly the key it will store. A size
 * of {@link ResidenceTable#TOMBSTONE} marks a delete.
 */
final class PreparedFrame {
    private record ResidenceId(int tag, byte[] key, int hash) {
        @Override
        public boolean equals(Object o) {
            return o instanceof ResidenceId r && r.tag == tag && Arrays.equals(r.key, key);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private static final PreparedFrame EMPTY = new PreparedFrame(0, null, null, null, 0);

    private final int rows;
    private final int[] tags;
    private final byte[][] keys;
    private final int[] hashes;
    private final long[] sequences;
    private final long[] sizes;
    private final RejectReason rejected;
    private final ResidenceRecord first;
    private final ResidenceRecord last;
    private final long maxSequence;

    private PreparedFrame(int rows, RejectReason rejected, ResidenceRecord first, ResidenceRecord last, long maxSequence) {
        this.rows = rows;
        this.tags = new int[rows];
        this.keys = new byte[rows][];
        this.hashes = new int[rows];
        this.sequences = new long[rows];
        this.sizes = new long[rows];
        this.rejected = rejected;
        this.first = first;
        this.last = last;
        this.maxSequence = maxSequence;
    }

    private PreparedFrame(PreparedFrame rowsOf, ResidenceRecord first, ResidenceRecord last, long maxSequence) {
        this.rows = rowsOf.rows;
        this.tags = rowsOf.tags;
        this.keys = rowsOf.keys;
        this.hashes = rowsOf.hashes;
        this.sequences = rowsOf.sequences;
        this.sizes = rowsOf.sizes;
        this.rejected = null;
        this.first = first;
        this.last = last;
        this.maxSequence = maxSequence;
    }

    /** Number of rows. */
    int rows() {
        return rows;
    }

    int tag(int i) {
        return tags[i];
    }

    byte[] key(int i) {
        return keys[i];
    }

    int hash(int i) {
        return hashes[i];
    }

    long sequence(int i) {
        return sequences[i];
    }

    /** Payload size of row {@code i}, or {@link ResidenceTable#TOMBSTONE} for a delete. */
    long size(int i) {
        return sizes[i];
    }

    boolean isDelete(int i) {
        return sizes[i] == ResidenceTable.TOMBSTONE;
    }

    RejectReason rejected() {
        return rejected;
    }

    /** The first record of a page (materialized for the cross-page order check), or null. */
    ResidenceRecord first() {
        return first;
    }

    /** The last record of a page, or null. */
    ResidenceRecord last() {
        return last;
    }

    long maxSequence() {
        return maxSequence;
    }

    private static PreparedFrame reject(RejectReason reason) {
        return new PreparedFrame(0, reason, null, null, 0);
    }

    /** Compares by (StateKey, medium): the resident-map order (DESIGN §4). */
    static int compareResidence(ResidenceRecord a, ResidenceRecord b) {
        int c = a.key().compareTo(b.key());
        return c != 0 ? c : a.medium().compareTo(b.medium());
    }

    /** A delta: every record's sequence lies in {@code interval} (DELTA-1). */
    static PreparedFrame delta(Interval interval, RecordBatch records, Scope scope, NamespaceTable namespaces) {
        IndexLockScope.preparing(); // DELTA-4: never under an owner view's write lock
        for (int i = 0; i < records.size(); i++) {
            if (!interval.contains(records.sequence(i))) {
                return reject(RejectReason.MALFORMED_FRAME);
            }
        }
        return prepare(records, scope, namespaces, false);
    }

    /** A snapshot page: puts only, strictly increasing (StateKey, medium) (SNAP-2). */
    static PreparedFrame page(RecordBatch records, Scope scope, NamespaceTable namespaces) {
        IndexLockScope.preparing(); // DELTA-4: never under an owner view's write lock
        for (int i = 0; i < records.size(); i++) {
            if (records.isDelete(i)) {
                return reject(RejectReason.MALFORMED_FRAME);
            }
        }
        if (records.firstDisorder() >= 0) { // remembered by the batch: the session's decoder already asked
            return reject(RejectReason.MALFORMED_FRAME);
        }
        return prepare(records, scope, namespaces, true);
    }

    private static PreparedFrame prepare(RecordBatch records, Scope scope, NamespaceTable namespaces, boolean ordered) {
        int n = records.size();
        if (n == 0) {
            return EMPTY;
        }
        PreparedFrame f = new PreparedFrame(n, null, null, null, 0);
        // Namespaces are checked and interned once per table entry, on first use by a record.
        int[] namespaceIds = new int[records.namespaceCount()];
        Arrays.fill(namespaceIds, -1);
        long max = 0;
        for (int i = 0; i < n; i++) {
            int j = records.namespaceIndex(i);
            int ns = namespaceIds[j];
            if (ns < 0) {
                if (!scope.contains(records.namespaceAt(j))) {
                    return reject(RejectReason.SCOPE_INVALID);
                }
                ns = namespaces.intern(records.namespaceAt(j));
                if (ns < 0) {
                    return reject(RejectReason.BUDGET_EXCEEDED);
                }
                namespaceIds[j] = ns;
            }
            int tag = ResidenceTable.tag(ns, records.medium(i).ordinal());
            byte[] key = records.key(i);
            f.tags[i] = tag;
            f.keys[i] = key;
            f.hashes[i] = ResidenceTable.hash(tag, key);
            f.sequences[i] = records.sequence(i);
            f.sizes[i] = records.isDelete(i) ? ResidenceTable.TOMBSTONE : records.sizeBytes(i);
            max = Math.max(max, records.sequence(i));
        }
        RejectReason duplicate = ordered || records.firstDisorder() < 0 ? null : duplicateProblem(f);
        if (duplicate != null) {
            return reject(duplicate);
        }
        return new PreparedFrame(f, ordered ? records.record(0) : null, ordered ? records.record(n - 1) : null, max);
    }

    /**
     * One record per residence in an unordered frame: a repeated residence with the same generation and
     * different content is a conflict (DELTA-5); any other repetition means the frame was not coalesced by
     * (StateKey, medium) and is malformed (DELTA-3).
     */
    private static RejectReason duplicateProblem(PreparedFrame f) {
        HashMap<ResidenceId, Integer> seen = new HashMap<>(f.rows * 2);
        for (int i = 0; i < f.rows; i++) {
            Integer prior = seen.putIfAbsent(new ResidenceId(f.tags[i], f.keys[i], f.hashes[i]), i);
            if (prior != null) {
                boolean conflict = f.sequences[prior] == f.sequences[i] && f.sizes[prior] != f.sizes[i];
                return conflict ? RejectReason.CONFLICTING_RECORD : RejectReason.MALFORMED_FRAME;
            }
        }
        return null;
    }
}
