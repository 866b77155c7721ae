package orbitkv.transfer.requester;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.Grant;
import orbitkv.transfer.ReleaseOutcome;

/**
 * A grant as its requester engine tracks it (INV-8): which blocks have been READ, how many READs are in
 * flight, and the release, which is sent only once every READ of it physically terminated. Guarded by its own
 * monitor.
 */
final class IssuedGrant implements Grant {
    /** Where a block lives in the source's shared arena; null fields when not shared. */
    record ArenaRef(String path, long device, long inode, long sizeBytes) {}

    private enum ReleaseState {
        NONE,
        PENDING,
        SENT
    }

    /** What the engine does about the release now: nothing, a Release call, or none because the source ended it. */
    enum ReleaseAction {
        NONE,
        SEND,
        /** The source ended the grant at its last send (release-after-last-read): no call, the grant is released. */
        FOLDED
    }

    final Engine engine;
    private final UUID id;
    /** The grant's secret: each data connection BINDs it before READing the grant (never logged). */
    final byte[] secret;
    final Member source;
    final Endpoint data;
    private final Duration expiry;
    private final long localDeadlineNanos;
    private final List<BlockResult> blocks;
    /** Arena offsets of granted blocks in the shared arena; -1 where not in it. */
    final long[] arenaOffsets;
    final ArenaRef arena;
    /** The source's boot id equals this host's. */
    final boolean sameHost;
    private final boolean[] readStarted;
    /** The source honours release-after-last-read for this grant (its Authorize answer said so). */
    private final boolean releaseAfterLastRead;
    /** Blocks whose READ completed (verified) over TCP: the source sent them whole on its data channel. */
    private final boolean[] completedOverTcp;
    private int readsInFlight;
    private ReleaseState releaseState = ReleaseState.NONE;
    private final CompletableFuture<ReleaseOutcome> released = new CompletableFuture<>();

    IssuedGrant(Engine engine, UUID id, byte[] secret, Member source, Endpoint data, Duration expiry, long localDeadlineNanos,
            List<BlockResult> blocks, long[] arenaOffsets, ArenaRef arena, boolean sameHost, boolean releaseAfterLastRead) {
        this.releaseAfterLastRead = releaseAfterLastRead;
        this.completedOverTcp = new boolean[blocks.size()];
        this.engine = engine;
        this.id = id;
        this.secret = secret;
        this.source = source;
        this.data = data;
        this.expiry = expiry;
        this.localDeadlineNanos = localDeadlineNanos;
        this.blocks = List.copyOf(blocks);
        this.arenaOffsets = arenaOffsets;
        this.arena = arena;
        this.sameHost = sameHost;
        this.readStarted = new boolean[blocks.size()];
    }

    @Override
    public UUID id() {
        return id;
    }

    @Override
    public Incarnation source() {
        return source.incarnation();
    }

    @Override
    public Duration expiry() {
        return expiry;
    }

    @Override
    public long localDeadlineNanos() {
        return localDeadlineNanos;
    }

    @Override
    public List<BlockResult> blocks() {
        return blocks;
    }

    @Override
    public boolean sharedMemoryEligible() {
        return arena != null;
    }

    /** Why a READ of block {@code index} may not start now; null if it may (and it is then marked started). */
    synchronized orbitkv.transfer.ReadRefusal startRead(int index, long nowNanos) {
        if (releaseState != ReleaseState.NONE) {
            return orbitkv.transfer.ReadRefusal.GRANT_RELEASED;
        }
        if (nowNanos - localDeadlineNanos >= 0) {
            return orbitkv.transfer.ReadRefusal.GRANT_EXPIRED;
        }
        if (!(blocks.get(index) instanceof BlockResult.Granted)) {
            return orbitkv.transfer.ReadRefusal.BLOCK_NOT_GRANTED;
        }
        if (readStarted[index]) {
            return orbitkv.transfer.ReadRefusal.ALREADY_READ;
        }
        readStarted[index] = true;
        readsInFlight++;
        return null;
    }

    /**
     * A READ of block {@code index} physically terminated. {@code readable} says the block may be READ again (the
     * source refused it before sending anything); {@code overTcp} that it completed, verified, over TCP. Returns what a
     * pending release needs now.
     */
    synchronized ReleaseAction readEnded(int index, boolean readable, boolean overTcp) {
        if (readsInFlight <= 0) {
            throw new IllegalStateException("grant " + id + ": READ ended with none in flight");
        }
        readsInFlight--;
        assert readsInFlight >= 0 : "grant " + id + ": " + readsInFlight + " READs in flight";
        if (readable) {
            readStarted[index] = false;
        }
        completedOverTcp[index] |= overTcp;
        if (releaseState == ReleaseState.PENDING && readsInFlight == 0) {
            releaseState = ReleaseState.SENT;
            return endedBySource() ? ReleaseAction.FOLDED : ReleaseAction.SEND;
        }
        return ReleaseAction.NONE;
    }

    /** Marks the grant released; what to do now (SEND or FOLDED when no READ is in flight, else NONE until then). */
    synchronized ReleaseAction requestRelease() {
        if (releaseState != ReleaseState.NONE) {
            return ReleaseAction.NONE;
        }
        if (readsInFlight == 0) {
            releaseState = ReleaseState.SENT;
            return endedBySource() ? ReleaseAction.FOLDED : ReleaseAction.SEND;
        }
        releaseState = ReleaseState.PENDING;
        return ReleaseAction.NONE;
    }

    /**
     * The source ended this grant itself: it honours release-after-last-read and every granted block arrived whole
     * over its data channel, so each was sent and the grant ended (RELEASED) at the last send's completion. Any other
     * case (a block not READ, READ over shared memory, or failed) needs the Release call.
     */
    private boolean endedBySource() {
        if (!releaseAfterLastRead) {
            return false;
        }
        for (int i = 0; i < blocks.size(); i++) {
            if (blocks.get(i) instanceof BlockResult.Granted && !completedOverTcp[i]) {
                return false;
            }
        }
        return true;
    }

    synchronized boolean idle() {
        return readsInFlight == 0;
    }

    synchronized boolean releaseRequested() {
        return releaseState != ReleaseState.NONE;
    }

    CompletableFuture<ReleaseOutcome> releaseFuture() {
        return released;
    }

    @Override
    public String toString() {
        return "Grant[" + id + " from " + source.incarnation() + ", " + blocks.size() + " blocks]";
    }
}
