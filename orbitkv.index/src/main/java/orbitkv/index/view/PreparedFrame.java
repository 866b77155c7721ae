package orbitkv.index.view;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import orbitkv.inventory.Interval;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;

/**
 * A frame's records decoded into row form and validated <em>before</em> any index lock is taken
 * (DELTA-2, DELTA-4): namespaces in scope, sequences inside the interval (DELTA-1), one record per
 * residence, conflicting same-generation records refused (DELTA-5), pages put-only and strictly ordered
 * (SNAP-2). Either {@link #rejected()} is non-null or {@link #records()} is ready to apply.
 */
final class PreparedFrame {
    /** One record in row form; {@code size == ResidenceTable.TOMBSTONE} for a delete. */
    record Row(int tag, byte[] key, int hash, long sequence, long size) {
        boolean isDelete() {
            return size == ResidenceTable.TOMBSTONE;
        }

        boolean sameContent(long seq, long sz) {
            return sequence == seq && size == sz;
        }
    }

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

    private final List<Row> records;
    private final RejectReason rejected;
    private final ResidenceRecord first;
    private final ResidenceRecord last;
    private final long maxSequence;

    private PreparedFrame(List<Row> records, RejectReason rejected, ResidenceRecord first, ResidenceRecord last,
            long maxSequence) {
        this.records = records;
        this.rejected = rejected;
        this.first = first;
        this.last = last;
        this.maxSequence = maxSequence;
    }

    List<Row> records() {
        return records;
    }

    RejectReason rejected() {
        return rejected;
    }

    ResidenceRecord first() {
        return first;
    }

    ResidenceRecord last() {
        return last;
    }

    long maxSequence() {
        return maxSequence;
    }

    private static PreparedFrame reject(RejectReason reason) {
        return new PreparedFrame(List.of(), reason, null, null, 0);
    }

    /** Compares by (StateKey, medium): the resident-map order (DESIGN §4). */
    static int compareResidence(ResidenceRecord a, ResidenceRecord b) {
        int c = a.key().compareTo(b.key());
        return c != 0 ? c : a.medium().compareTo(b.medium());
    }

    /** A delta: every record's sequence lies in {@code interval} (DELTA-1). */
    static PreparedFrame delta(Interval interval, List<ResidenceRecord> records, Scope scope, NamespaceTable namespaces) {
        for (ResidenceRecord r : records) {
            if (!interval.contains(r.sequence())) {
                return reject(RejectReason.MALFORMED_FRAME);
            }
        }
        return prepare(records, scope, namespaces, false);
    }

    /** A snapshot page: puts only, strictly increasing (StateKey, medium) (SNAP-2). */
    static PreparedFrame page(List<ResidenceRecord> records, Scope scope, NamespaceTable namespaces) {
        for (int i = 0; i < records.size(); i++) {
            if (records.get(i).isDelete()) {
                return reject(RejectReason.MALFORMED_FRAME);
            }
            if (i > 0 && compareResidence(records.get(i - 1), records.get(i)) >= 0) {
                return reject(RejectReason.MALFORMED_FRAME);
            }
        }
        return prepare(records, scope, namespaces, true);
    }

    private static PreparedFrame prepare(List<ResidenceRecord> records, Scope scope, NamespaceTable namespaces,
            boolean ordered) {
        List<Row> rows = new ArrayList<>(records.size());
        HashMap<ResidenceId, Row> seen = ordered ? null : new HashMap<>(records.size() * 2);
        long max = 0;
        for (ResidenceRecord r : records) {
            if (!scope.contains(r.key().namespace())) {
                return reject(RejectReason.SCOPE_INVALID);
            }
            int ns = namespaces.intern(r.key().namespace());
            if (ns < 0) {
                return reject(RejectReason.BUDGET_EXCEEDED);
            }
            int tag = ResidenceTable.tag(ns, r.medium().ordinal());
            byte[] key = r.key().key();
            int hash = ResidenceTable.hash(tag, key);
            Row row = new Row(tag, key, hash, r.sequence(), r.isDelete() ? ResidenceTable.TOMBSTONE : r.sizeBytes());
            if (seen != null) {
                Row prior = seen.putIfAbsent(new ResidenceId(tag, key, hash), row);
                if (prior != null) {
                    // Same generation, different content: a conflict (DELTA-5); otherwise the frame was
                    // not coalesced by (StateKey, medium) and is malformed (DELTA-3).
                    boolean conflict = prior.sequence() == row.sequence() && prior.size() != row.size();
                    return reject(conflict ? RejectReason.CONFLICTING_RECORD : RejectReason.MALFORMED_FRAME);
                }
            }
            max = Math.max(max, r.sequence());
            rows.add(row);
        }
        ResidenceRecord first = records.isEmpty() ? null : records.getFirst();
        ResidenceRecord last = records.isEmpty() ? null : records.getLast();
        return new PreparedFrame(rows, null, first, last, max);
    }
}
