package orbitkv.inventory;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * The records of one frame in columnar form: what the session's requester end decodes and what a
 * {@link ViewReceiver} applies (DESIGN §5; PUB-9 exact records, SES-9 field widths). A batch holds a namespace table, one concatenated key array
 * and primitive columns, so a frame of a thousand records is a handful of arrays instead of thousands of
 * {@link ResidenceRecord}/{@link StateKey} objects with key copies (issue 5's bootstrap throughput).
 *
 * <p>Immutable. Every record satisfies the {@link ResidenceRecord} invariants (key 1..64 bytes, sequence
 * {@code >= 1}, size {@code >= 0}, a delete has size 0); they are checked when a record is added, so an
 * invalid batch cannot be built. Order is <em>not</em> an invariant of the type: frames are validated
 * for strict {@code (StateKey, medium)} order by the codec and again by the receiver, which refuse with
 * their own named reasons. {@link #record(int)} and {@link #asList()} materialize records on demand.
 */
public final class RecordBatch {
    private static final byte FLAG_SSD = 1;
    private static final byte FLAG_DELETE = 2;
    /** {@link #firstDisorder} not computed yet. */
    private static final int DISORDER_UNKNOWN = -2;
    private static final RecordBatch EMPTY = builder(0).build();

    private final Namespace[] namespaces;
    private final int[] namespaceIndex;
    private final byte[] keys;
    private final int[] keyEnd;
    private final byte[] flags;
    private final long[] sequences;
    private final long[] sizes;
    private final int size;
    /**
     * {@link #firstDisorder()} once computed, else {@link #DISORDER_UNKNOWN}. The batch is immutable, so a race
     * only computes the same int twice; the decoder and the index both ask, and a page is scanned once.
     */
    private int firstDisorder = DISORDER_UNKNOWN;

    /** Takes the builder's arrays (the builder is spent); the columns may be longer than {@code size}. */
    private RecordBatch(Builder b) {
        this.namespaces = Arrays.copyOf(b.namespaces, b.namespaceCount);
        this.size = b.size;
        this.namespaceIndex = b.namespaceIndex;
        this.keyEnd = b.keyEnd;
        this.keys = b.keys;
        this.flags = b.flags;
        this.sequences = b.sequences;
        this.sizes = b.sizes;
    }

    /** The empty batch. */
    public static RecordBatch empty() {
        return EMPTY;
    }

    /** A batch of {@code records} in their order (namespaces in first-appearance order). */
    public static RecordBatch of(List<ResidenceRecord> records) {
        Objects.requireNonNull(records, "records must not be null");
        Builder b = builder(records.size());
        for (ResidenceRecord r : records) {
            b.add(r);
        }
        return b.build();
    }

    /** A builder expecting about {@code recordsExpected} records (a hint; it grows). */
    public static Builder builder(int recordsExpected) {
        return new Builder(recordsExpected);
    }

    /** Number of records. */
    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** Entries of the namespace table. */
    public int namespaceCount() {
        return namespaces.length;
    }

    /** Namespace table entry {@code j}. */
    public Namespace namespaceAt(int j) {
        return namespaces[j];
    }

    /** The namespace table index of record {@code i}. */
    public int namespaceIndex(int i) {
        return namespaceIndex[check(i)];
    }

    /** The namespace of record {@code i}. */
    public Namespace namespace(int i) {
        return namespaces[namespaceIndex(i)];
    }

    /** Key length of record {@code i} in bytes. */
    public int keyLength(int i) {
        return keyEnd[check(i)] - keyStart(i);
    }

    /** A fresh copy of the key bytes of record {@code i}. */
    public byte[] key(int i) {
        return Arrays.copyOfRange(keys, keyStart(check(i)), keyEnd[i]);
    }

    /**
     * Copies the key bytes of record {@code i} into {@code dst} at {@code offset}.
     *
     * @return the offset just past the copied bytes
     */
    public int copyKeyInto(int i, byte[] dst, int offset) {
        int from = keyStart(check(i));
        int len = keyEnd[i] - from;
        System.arraycopy(keys, from, dst, offset, len);
        return offset + len;
    }

    public Medium medium(int i) {
        return (flags[check(i)] & FLAG_SSD) != 0 ? Medium.SSD : Medium.DRAM;
    }

    public boolean isDelete(int i) {
        return (flags[check(i)] & FLAG_DELETE) != 0;
    }

    public ResidenceRecord.Op op(int i) {
        return isDelete(i) ? ResidenceRecord.Op.DELETE : ResidenceRecord.Op.PUT;
    }

    /** The residency sequence of record {@code i}. */
    public long sequence(int i) {
        return sequences[check(i)];
    }

    /** The payload size of record {@code i} (0 for a delete). */
    public long sizeBytes(int i) {
        return sizes[check(i)];
    }

    /**
     * Compares records {@code i} and {@code j} of this batch by {@code (StateKey, medium)}, the resident-map
     * order of {@link ResidenceOrder}, without materializing them.
     */
    public int compare(int i, int j) {
        check(i);
        check(j);
        int c = namespaceIndex[i] == namespaceIndex[j] ? 0 : namespaces[namespaceIndex[i]].compareTo(namespaces[namespaceIndex[j]]);
        if (c == 0) {
            c = Arrays.compareUnsigned(keys, keyStart(i), keyEnd[i], keys, keyStart(j), keyEnd[j]);
        }
        return c != 0 ? c : Integer.compare(flags[i] & FLAG_SSD, flags[j] & FLAG_SSD);
    }

    /**
     * The first record that is not strictly after its predecessor in {@code (StateKey, medium)} order
     * ({@link #compare}), or -1 when the whole batch is strictly increasing (a page must be, SNAP-2).
     * Computed on first call and remembered.
     */
    public int firstDisorder() {
        int d = firstDisorder;
        if (d == DISORDER_UNKNOWN) {
            d = -1;
            for (int i = 1; i < size; i++) {
                if (compare(i - 1, i) >= 0) {
                    d = i;
                    break;
                }
            }
            firstDisorder = d;
        }
        return d;
    }

    /** Record {@code i} as a contract object (allocates). */
    public ResidenceRecord record(int i) {
        StateKey key = new StateKey(namespace(i), key(i));
        return isDelete(i) ? ResidenceRecord.delete(key, medium(i), sequences[i])
                : ResidenceRecord.put(key, medium(i), sequences[i], sizes[i]);
    }

    /** A read-only list view materializing {@link #record(int)} on each access. */
    public List<ResidenceRecord> asList() {
        return new Records();
    }

    private int keyStart(int i) {
        return i == 0 ? 0 : keyEnd[i - 1];
    }

    private int check(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("record " + i + " of a batch of " + size);
        }
        return i;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RecordBatch b) || b.size != size) {
            return false;
        }
        for (int i = 0; i < size; i++) {
            if (!namespace(i).equals(b.namespace(i)) || flags[i] != b.flags[i] || sequences[i] != b.sequences[i]
                    || sizes[i] != b.sizes[i]
                    || !Arrays.equals(keys, keyStart(i), keyEnd[i], b.keys, b.keyStart(i), b.keyEnd[i])) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return asList().hashCode();
    }

    @Override
    public String toString() {
        return "RecordBatch" + (size <= 8 ? asList().toString() : "[" + size + " records]");
    }

    private final class Records extends AbstractList<ResidenceRecord> implements RandomAccess {
        @Override
        public ResidenceRecord get(int index) {
            return record(index);
        }

        @Override
        public int size() {
            return size;
        }
    }

    /**
     * Appends records; not thread-safe. Each {@code add} checks the record invariants and throws
     * {@link IllegalArgumentException} naming the record index; nothing is added then. The builder itself
     * does not bound its size: its owner does (the codec builds a batch only after the frame's decoded-bytes
     * bound passed, SES-10; {@link #of} copies a list the caller already holds).
     */
    public static final class Builder {
        private Namespace[] namespaces = new Namespace[4];
        private int namespaceCount;
        private int lastNamespace = -1;
        private int[] namespaceIndex;
        private byte[] keys;
        private int[] keyEnd;
        private byte[] flags;
        private long[] sequences;
        private long[] sizes;
        private int size;
        private boolean built;

        private Builder(int expected) {
            if (expected < 0) {
                throw new IllegalArgumentException("expected records must be >= 0, got " + expected);
            }
            int n = Math.max(4, expected);
            namespaceIndex = new int[n];
            keys = new byte[n * 32];
            keyEnd = new int[n];
            flags = new byte[n];
            sequences = new long[n];
            sizes = new long[n];
        }

        /** Records added so far. */
        public int size() {
            return size;
        }

        /** The table index of {@code ns}, adding it to the namespace table if new. */
        public int namespace(Namespace ns) {
            Objects.requireNonNull(ns, "namespace must not be null");
            if (lastNamespace >= 0 && (namespaces[lastNamespace] == ns || namespaces[lastNamespace].equals(ns))) {
                return lastNamespace;
            }
            for (int j = 0; j < namespaceCount; j++) {
                if (namespaces[j].equals(ns)) {
                    return lastNamespace = j;
                }
            }
            if (namespaceCount == namespaces.length) {
                namespaces = Arrays.copyOf(namespaces, namespaceCount * 2);
            }
            namespaces[namespaceCount] = ns;
            return lastNamespace = namespaceCount++;
        }

        /** Appends one contract record. */
        public Builder add(ResidenceRecord r) {
            StateKey k = r.key();
            int ns = namespace(k.namespace());
            ensure(k.keyLength());
            int at = size == 0 ? 0 : keyEnd[size - 1];
            k.copyKeyInto(keys, at);
            append(ns, at + k.keyLength(), r.medium(), r.isDelete(), r.sequence(), r.sizeBytes());
            return this;
        }

        /**
         * Appends one record whose key is {@code key[offset, offset + length)} (copied).
         *
         * @throws IllegalArgumentException naming the record if it breaks a record invariant
         */
        public Builder add(int namespaceIndex, byte[] key, int offset, int length, Medium medium, boolean delete,
                long sequence, long sizeBytes) {
            if (namespaceIndex < 0 || namespaceIndex >= namespaceCount) {
                throw new IllegalArgumentException("record " + size + ": namespace index " + namespaceIndex
                        + " is not below the table size " + namespaceCount);
            }
            if (length < 1 || length > StateKey.MAX_KEY_BYTES) {
                throw new IllegalArgumentException("record " + size + ": key must be 1.." + StateKey.MAX_KEY_BYTES
                        + " bytes, got " + length);
            }
            Objects.requireNonNull(medium, "medium must not be null");
            if (sequence < 1) {
                throw new IllegalArgumentException("record " + size + ": sequence must be >= 1, got " + sequence);
            }
            if (sizeBytes < 0) {
                throw new IllegalArgumentException("record " + size + ": size must be >= 0 bytes, got " + sizeBytes);
            }
            if (delete && sizeBytes != 0) {
                throw new IllegalArgumentException("record " + size + ": a delete carries size 0, got " + sizeBytes);
            }
            ensure(length);
            int at = size == 0 ? 0 : keyEnd[size - 1];
            System.arraycopy(key, offset, keys, at, length);
            append(namespaceIndex, at + length, medium, delete, sequence, sizeBytes);
            return this;
        }

        private void append(int ns, int end, Medium medium, boolean delete, long sequence, long sizeBytes) {
            namespaceIndex[size] = ns;
            keyEnd[size] = end;
            flags[size] = (byte) ((medium == Medium.SSD ? FLAG_SSD : 0) | (delete ? FLAG_DELETE : 0));
            sequences[size] = sequence;
            sizes[size] = sizeBytes;
            size++;
        }

        private void ensure(int keyLength) {
            requireOpen();
            if (size == namespaceIndex.length) {
                int n = size * 2;
                namespaceIndex = Arrays.copyOf(namespaceIndex, n);
                keyEnd = Arrays.copyOf(keyEnd, n);
                flags = Arrays.copyOf(flags, n);
                sequences = Arrays.copyOf(sequences, n);
                sizes = Arrays.copyOf(sizes, n);
            }
            int used = size == 0 ? 0 : keyEnd[size - 1];
            if (used + keyLength > keys.length) {
                keys = Arrays.copyOf(keys, Math.max(keys.length * 2, used + keyLength));
            }
        }

        /** The immutable batch; the builder is spent afterwards (it hands its arrays over). */
        public RecordBatch build() {
            requireOpen();
            built = true;
            return new RecordBatch(this);
        }

        private void requireOpen() {
            if (built) {
                throw new IllegalStateException("record batch builder already built");
            }
        }
    }
}
