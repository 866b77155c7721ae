package orbitkv.conformance.baseline;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * The requester side of the etcd baseline: a GlobalIndex-like view built from one etcd Watch over the baseline
 * prefix (DESIGN §4). It reads the prefix at a fixed revision, then watches from the next revision, and keeps per
 * owner the residences {@code (StateKey, medium) -> (sequence, size)} and the covered cursor. When an owner's
 * covered cursor advances, the observer stamps the installation (sequence, {@code System.nanoTime()}) after the
 * rows of that revision are applied under its lock: the same install point as the GlobalIndex's (PERF-1).
 * Only the latest stamp per owner is kept (a bounded status field, as in the Manager).
 */
public final class BlockObserver implements AutoCloseable {
    /** One owner's installed state. */
    public record Installed(long sequence, long monoNanos) {
        public static final Installed NONE = new Installed(-1, -1);
    }

    /** A residence as the observer holds it. */
    public record Row(long sequence, long sizeBytes) {}

    private record Residence(StateKey key, Medium medium) {}

    private final BaselineKeys keys;
    private final Client client;
    private final Map<String, Map<Residence, Row>> rows = new HashMap<>();
    private final Map<String, PublisherCursor> cursors = new HashMap<>();
    private final Map<String, Installed> installed = new HashMap<>();
    private Watch.Watcher watcher;
    private volatile Throwable failure;
    final AtomicLong events = new AtomicLong();
    final AtomicLong responses = new AtomicLong();

    private BlockObserver(BaselineKeys keys, Client client) {
        this.keys = keys;
        this.client = client;
    }

    /** Reads the baseline prefix at one revision and watches from the next (the client stays the caller's). */
    public static BlockObserver start(BaselineKeys keys, Client client, long callTimeoutMs) throws Exception {
        BlockObserver o = new BlockObserver(keys, client);
        ByteSequence prefix = BaselineKeys.bytes(keys.prefix());
        GetResponse snapshot = client.getKVClient().get(prefix, GetOption.builder().isPrefix(true).build())
                .get(callTimeoutMs, TimeUnit.MILLISECONDS);
        long revision = snapshot.getHeader().getRevision();
        synchronized (o) {
            for (KeyValue kv : snapshot.getKvs()) {
                o.put(kv);
            }
        }
        o.watcher = client.getWatchClient().watch(prefix, WatchOption.builder().isPrefix(true).withRevision(revision + 1).build(),
                new Watch.Listener() {
                    @Override
                    public void onNext(WatchResponse r) {
                        o.apply(r);
                    }

                    @Override
                    public void onError(Throwable t) {
                        o.failure = t; // a compaction gap or a lost stream: the harness fails collection
                    }

                    @Override
                    public void onCompleted() {}
                });
        return o;
    }

    private synchronized void apply(WatchResponse r) {
        responses.incrementAndGet();
        for (WatchEvent e : r.getEvents()) {
            events.incrementAndGet();
            if (e.getEventType() == WatchEvent.EventType.PUT) {
                put(e.getKeyValue());
            } else if (e.getEventType() == WatchEvent.EventType.DELETE) {
                BaselineKeys.BlockKey b = keys.parseBlock(e.getKeyValue().getKey().toString(StandardCharsets.UTF_8));
                if (b != null) {
                    Map<Residence, Row> m = rows.get(b.owner());
                    if (m != null) {
                        m.remove(new Residence(b.key(), b.medium()));
                    }
                }
            }
        }
    }

    /** Applies one put; a cursor whose covered sequence advanced stamps the owner's installation. Under the lock. */
    private void put(KeyValue kv) {
        String key = kv.getKey().toString(StandardCharsets.UTF_8);
        BaselineKeys.BlockKey b = keys.parseBlock(key);
        if (b != null) {
            long[] v = BaselineKeys.parseBlockValue(kv.getValue().getBytes());
            rows.computeIfAbsent(b.owner(), x -> new HashMap<>()).put(new Residence(b.key(), b.medium()), new Row(v[0], v[1]));
            return;
        }
        String owner = keys.parseCursorOwner(key);
        if (owner != null) {
            PublisherCursor c = PublisherCursor.parse(kv.getValue().toString(StandardCharsets.UTF_8));
            PublisherCursor before = cursors.put(owner, c);
            if (before == null || c.covered() > before.covered()) {
                installed.put(owner, new Installed(c.covered(), System.nanoTime()));
            }
        }
    }

    /** The covered cursor of {@code owner} as last applied (0 if none). */
    public synchronized long covered(String owner) {
        PublisherCursor c = cursors.get(owner);
        return c == null ? 0 : c.covered();
    }

    /** The latest installation stamp of {@code owner}. */
    public synchronized Installed installed(String owner) {
        return installed.getOrDefault(owner, Installed.NONE);
    }

    /** Owners holding {@code (key, medium)}: positive evidence as etcd last delivered it. */
    public synchronized List<String> lookup(StateKey key, Medium medium) {
        Residence r = new Residence(key, medium);
        return rows.entrySet().stream().filter(e -> e.getValue().containsKey(r)).map(Map.Entry::getKey).sorted().toList();
    }

    /** A copy of {@code owner}'s rows, "nsHex/keyHex/MEDIUM" -> row, sorted (for oracles). */
    public synchronized Map<String, Row> rows(String owner) {
        Map<String, Row> out = new TreeMap<>();
        rows.getOrDefault(owner, Map.of()).forEach((r, row) -> out.put(
                java.util.HexFormat.of().formatHex(r.key().namespace().bytes()) + "/" + r.key().keyHex() + "/" + r.medium(), row));
        return out;
    }

    public synchronized int rowCount() {
        return rows.values().stream().mapToInt(Map::size).sum();
    }

    /** The watch error that ended the view, if any. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public void close() {
        if (watcher != null) {
            watcher.close();
        }
    }
}
