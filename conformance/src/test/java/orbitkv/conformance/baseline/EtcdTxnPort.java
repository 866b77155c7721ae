package orbitkv.conformance.baseline;

import java.util.List;
import java.util.Optional;

/**
 * The two etcd requests of the block publisher: one compare-and-swap transaction per chunk and the cursor
 * read that reconciles an ambiguous result (PUB-3). {@link JetcdTxnPort} talks to real etcd; tests wrap it
 * to inject lost requests and lost replies.
 */
public interface EtcdTxnPort extends AutoCloseable {
    /** One block operation of a transaction. */
    sealed interface BlockOp permits BlockOp.Put, BlockOp.Delete {
        String key();

        /** Encoded key + value bytes, for the transaction byte bound. */
        int bytes();

        record Put(String key, long sequence, long sizeBytes) implements BlockOp {
            @Override
            public int bytes() {
                return key.length() + 16;
            }
        }

        record Delete(String key) implements BlockOp {
            @Override
            public int bytes() {
                return key.length();
            }
        }
    }

    /** The stored cursor value and its etcd mod revision. */
    record StoredCursor(String value, long modRevision) {}

    /** Outcome of a transaction whose reply arrived. */
    sealed interface TxnResult permits TxnResult.Committed, TxnResult.CasFailed {
        /** The compare held; the operations and the cursor are stored at {@code revision}. */
        record Committed(long revision) implements TxnResult {}

        /** The cursor was not at the expected mod revision; nothing was written. */
        record CasFailed() implements TxnResult {}
    }

    /** No reply: the transaction may or may not have committed (a timeout, a reset connection, a lost reply). */
    final class AmbiguousResult extends Exception {
        public AmbiguousResult(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * If the cursor key's mod revision is {@code expectedCursorModRevision} (0: the key does not exist), apply
     * {@code ops} and put {@code cursorValue}, in one transaction.
     */
    TxnResult commit(String cursorKey, long expectedCursorModRevision, List<BlockOp> ops, String cursorValue)
            throws AmbiguousResult;

    /** The stored cursor, if any (a linearizable read). */
    Optional<StoredCursor> readCursor(String cursorKey) throws AmbiguousResult;

    @Override
    void close();
}
