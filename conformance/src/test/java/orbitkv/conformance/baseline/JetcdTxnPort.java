package orbitkv.conformance.baseline;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@link EtcdTxnPort} on a jetcd client; every call has the configured deadline (NOTES: jetcd does not retry). */
public final class JetcdTxnPort implements EtcdTxnPort {
    private final Client client;
    private final KV kv;
    private final long callTimeoutMs;
    private final boolean ownsClient;

    public JetcdTxnPort(Client client, long callTimeoutMs, boolean ownsClient) {
        this.client = client;
        this.kv = client.getKVClient();
        this.callTimeoutMs = callTimeoutMs;
        this.ownsClient = ownsClient;
    }

    @Override
    public TxnResult commit(String cursorKey, long expectedCursorModRevision, List<BlockOp> ops, String cursorValue)
            throws AmbiguousResult {
        Op[] then = new Op[ops.size() + 1];
        for (int i = 0; i < ops.size(); i++) {
            then[i] = switch (ops.get(i)) {
                case BlockOp.Put p -> Op.put(BaselineKeys.bytes(p.key()), BaselineKeys.blockValue(p.sequence(), p.sizeBytes()),
                        PutOption.DEFAULT);
                case BlockOp.Delete d -> Op.delete(BaselineKeys.bytes(d.key()), DeleteOption.DEFAULT);
            };
        }
        then[ops.size()] = Op.put(BaselineKeys.bytes(cursorKey), BaselineKeys.bytes(cursorValue), PutOption.DEFAULT);
        Cmp cmp = expectedCursorModRevision == 0
                ? new Cmp(BaselineKeys.bytes(cursorKey), Cmp.Op.EQUAL, CmpTarget.version(0))
                : new Cmp(BaselineKeys.bytes(cursorKey), Cmp.Op.EQUAL, CmpTarget.modRevision(expectedCursorModRevision));
        TxnResponse r = await(kv.txn().If(cmp).Then(then).commit());
        return r.isSucceeded() ? new TxnResult.Committed(r.getHeader().getRevision()) : new TxnResult.CasFailed();
    }

    @Override
    public Optional<StoredCursor> readCursor(String cursorKey) throws AmbiguousResult {
        GetResponse r = await(kv.get(BaselineKeys.bytes(cursorKey)));
        return r.getKvs().isEmpty() ? Optional.empty()
                : Optional.of(new StoredCursor(r.getKvs().getFirst().getValue().toString(), r.getKvs().getFirst().getModRevision()));
    }

    private <T> T await(java.util.concurrent.CompletableFuture<T> f) throws AmbiguousResult {
        try {
            return f.get(callTimeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new AmbiguousResult("etcd call timed out after " + callTimeoutMs + " ms", e);
        } catch (ExecutionException e) {
            throw new AmbiguousResult("etcd call failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            f.cancel(true);
            throw new AmbiguousResult("interrupted", e);
        }
    }

    @Override
    public void close() {
        if (ownsClient) {
            client.close();
        }
    }
}
