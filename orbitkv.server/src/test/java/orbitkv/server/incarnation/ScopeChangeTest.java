package orbitkv.server.incarnation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.index.Coverage;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.Replica;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventoryFence;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RequesterSessionMetrics;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.ProtocolClock;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * IDX-6 (issue 40 item 4): a scope change while serving, over real GlobalIndex generations and fake session ends
 * whose receivers the test feeds as a source's snapshot would. The serving generation answers every query whole
 * until the next one has an installed view of every member the serving one has; the swap is one switch; a timeout or
 * a fence abandons the next generation and the serving one resumes its sessions; one change at a time.
 */
@Tag("unit")
class ScopeChangeTest {
    private static final Namespace NS_A = Namespace.utf8("model-a");
    private static final Namespace NS_B = Namespace.utf8("model-b");
    private static final Scope OLD = Scope.of(List.of(NS_A));
    private static final Scope NEW = Scope.of(List.of(NS_B));

    private final Incarnation self = TestMembership.incarnation("a", 1);
    private final Incarnation peer = TestMembership.incarnation("b", 1);
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<FakeSubscriber> opened = new ArrayList<>();
    private TestMembership membership;
    private GlobalIndex first;
    private ScopeGenerations scopes;
    private ClusterMetadata metadata;

    /** A requester end that runs no session: the test plays the source into its receiver. */
    private static final class FakeSubscriber implements InventorySubscriber {
        final Scope scope;
        final ViewReceiver receiver;
        final List<MembershipView> views = new ArrayList<>();
        String ended;

        FakeSubscriber(Scope scope, ViewReceiver receiver) {
            this.scope = scope;
            this.receiver = receiver;
        }

        @Override
        public void onMembership(MembershipView view) {
            views.add(view);
        }

        @Override
        public boolean flushThrough(Incarnation source, long targetSequence) {
            return ended == null;
        }

        @Override
        public SubscriptionStatus status() {
            return new SubscriptionStatus(1, List.of(), List.of());
        }

        @Override
        public void fence() {
            ended = "fenced";
        }

        @Override
        public RequesterSessionMetrics metrics() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
            ended = "closed";
        }
    }

    private final ProtocolClock clock = new ProtocolClock() {
        @Override
        public long nanoTime() {
            return now.get();
        }

        @Override
        public Scheduled schedule(Runnable task, long delayNanos) {
            return Scheduled.NONE; // the test calls poll() itself
        }
    };

    @BeforeEach
    void setUp() {
        membership = new TestMembership(self);
        InventorySource source = InventorySource.create(InventoryConfig.defaults());
        first = GlobalIndex.create(self, OLD, IndexConfig.defaults(), clock, Runnable::run);
        AwaitSignals signals = AwaitSignals.over(first, 4);
        FakeSubscriber firstSubscriber = new FakeSubscriber(OLD, signals.viewReceiver());
        opened.add(firstSubscriber);
        scopes = new ScopeGenerations(self, membership::view, new ScopeGenerations.Generation(1, OLD, first),
                firstSubscriber, (scope, receiver) -> {
                    FakeSubscriber s = new FakeSubscriber(scope, receiver);
                    opened.add(s);
                    return s;
                }, signals::receiverOver, signals::signal, clock, false);
        metadata = new ClusterMetadata(membership, scopes, source, signals, null, null);
        InventorySubscriber live = scopes.subscriber();
        membership.addListener(e -> {
            metadata.onMembershipEvent(e);
            live.onMembership(e.view());
        });
        membership.change(TestMembership.view(2, true, List.of(self, peer)));
        assertThat(install(signals.viewReceiver(), OLD, new UUID(1, 1), 10, List.of(put(NS_A, 1, 5))))
                .isInstanceOf(CommitOutcome.Installed.class);
    }

    private static ResidenceRecord put(Namespace ns, int key, long sequence) {
        return ResidenceRecord.put(new StateKey(ns, new byte[] {(byte) key}), Medium.DRAM, sequence, 64);
    }

    /** The source's side of a bootstrap: a one-page snapshot of {@code rows} committed at {@code s1}. */
    private CommitOutcome install(ViewReceiver receiver, Scope scope, UUID view, long s1, List<ResidenceRecord> rows) {
        TranscriptDigest.Builder t = TranscriptDigest.builder().begin(1, view, scope.digest(), s1);
        StageOutcome b = receiver.beginStaging(peer, view, scope.digest(), s1, 1);
        assertThat(b).isInstanceOf(StageOutcome.Staged.class);
        t.page(2, 1, rows);
        assertThat(receiver.stagePage(peer, view, 1, 2, rows)).isInstanceOf(StageOutcome.Staged.class);
        long max = rows.stream().mapToLong(ResidenceRecord::sequence).max().orElse(0);
        return receiver.commit(peer, view, new CommitMarker(s1, 1, 1, 2, max, t.finish()));
    }

    private DistributedMetadata.Lookup query(Namespace ns, int key) {
        return metadata.lookup(ns, List.of(new StateKey(ns, new byte[] {(byte) key})));
    }

    private static void refused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, ApiError code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(MetadataRefusal.class,
                e -> assertThat(ApiException.of(e).error()).isEqualTo(code));
    }

    private FakeSubscriber last() {
        return opened.getLast();
    }

    @Test
    @DisplayName("IDX-6 SES-2 the next generation bootstraps beside the serving one, which answers whole until one switch")
    void swapWhenComplete() {
        assertThat(query(NS_A, 1).coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        IncarnationStatus.ScopeChange change = metadata.changeScope(NEW, 60_000);
        assertThat(change).isEqualTo(new IncarnationStatus.ScopeChange(2, NEW.digest().hex(), "bootstrapping"));
        assertThat(opened.getFirst().ended).as("one session per source (SES-2): the serving sessions end").isEqualTo("closed");
        assertThat(last().scope).isEqualTo(NEW);
        assertThat(last().views).as("the new sessions start from the current view").isNotEmpty();
        // until the switch: the old generation answers, whole
        scopes.poll();
        assertThat(scopes.current().number()).isEqualTo(1);
        assertThat(query(NS_A, 1).replicas().getFirst()).extracting(Replica::owner).containsExactly(peer);
        assertThat(query(NS_B, 2).coverage()).isEqualTo(Coverage.Unavailable);
        assertThat(metadata.status(10, null, 0).scope().pending().generation()).isEqualTo(2);
        assertThat(install(last().receiver, NEW, new UUID(2, 1), 12, List.of(put(NS_B, 2, 12)))).isInstanceOf(CommitOutcome.Installed.class);
        assertThat(query(NS_B, 2).coverage()).as("installed but not yet switched").isEqualTo(Coverage.Unavailable);
        long viewGenerationBefore = query(NS_A, 1).viewGeneration();
        scopes.poll();
        // after the switch: the new generation answers, whole
        assertThat(scopes.current().number()).isEqualTo(2);
        DistributedMetadata.Lookup b = query(NS_B, 2);
        assertThat(b.coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        assertThat(b.replicas().getFirst()).extracting(Replica::owner, Replica::sequence).containsExactly(org.assertj.core.groups.Tuple.tuple(peer, 12L));
        assertThat(b.viewGeneration()).isGreaterThan(viewGenerationBefore);
        assertThat(query(NS_A, 1).coverage()).isEqualTo(Coverage.Unavailable);
        assertThat(first.coverage()).as("the old generation is retired").isEqualTo(Coverage.Unavailable);
        IncarnationStatus.ScopeView view = metadata.status(10, null, 0).scope();
        assertThat(view.generation()).isEqualTo(2);
        assertThat(view.digest()).isEqualTo(NEW.digest().hex());
        assertThat(view.pending()).isNull();
        assertThat(view.changes()).isEqualTo(new IncarnationStatus.ScopeChanges(1, 0, 0, "swapped"));
        assertThat(last().ended).as("the new generation's sessions keep running").isNull();
    }

    @Test
    @DisplayName("IDX-6 BND-1 one pending generation: a second request is refused SCOPE_CHANGE_PENDING, counted, nothing changed")
    void onePending() {
        metadata.changeScope(NEW, 60_000);
        int sessions = opened.size();
        refused(() -> metadata.changeScope(Scope.all(), 60_000), ApiError.SCOPE_CHANGE_PENDING);
        assertThat(ApiError.SCOPE_CHANGE_PENDING.status()).isEqualTo(409);
        assertThat(opened).hasSize(sessions);
        IncarnationStatus.ScopeView view = metadata.status(10, null, 0).scope();
        assertThat(view.pending().digest()).isEqualTo(NEW.digest().hex());
        assertThat(view.changes().refusedPending()).isEqualTo(1);
        assertThat(view.generation()).isEqualTo(1);
    }

    @Test
    @DisplayName("IDX-6 SNAP-8 a generation not complete by its deadline is abandoned: retired, and the serving one resumes its sessions")
    void abandonedOnTimeout() {
        long budgetBefore = first.status().budgetBytesUsed();
        metadata.changeScope(NEW, 1_000);
        FakeSubscriber pending = last();
        // a bootstrap under way: staged rows are charged to the one budget
        assertThat(pending.receiver.beginStaging(peer, new UUID(2, 1), NEW.digest(), 12, 1)).isInstanceOf(StageOutcome.Staged.class);
        assertThat(pending.receiver.stagePage(peer, new UUID(2, 1), 1, 2, List.of(put(NS_B, 2, 12))))
                .isInstanceOf(StageOutcome.Staged.class);
        assertThat(first.status().budgetBytesUsed()).isGreaterThan(budgetBefore);
        now.addAndGet(999_000_000L);
        scopes.poll();
        assertThat(scopes.pending()).isPresent();
        now.addAndGet(1_000_000L);
        scopes.poll();
        assertThat(scopes.pending()).isEmpty();
        assertThat(pending.ended).isEqualTo("closed");
        assertThat(last().scope).as("the serving scope's sessions resume").isEqualTo(OLD);
        assertThat(last().ended).isNull();
        assertThat(first.installedCursor(peer)).as("from its installed view (SNAP-8)").isPresent();
        assertThat(pending.receiver.beginStaging(peer, new UUID(3, 1), NEW.digest(), 1, 1))
                .as("the abandoned generation is retired").isInstanceOf(StageOutcome.Rejected.class);
        assertThat(query(NS_A, 1).replicas().getFirst()).extracting(Replica::owner).containsExactly(peer);
        IncarnationStatus.ScopeView view = metadata.status(10, null, 0).scope();
        assertThat(view.generation()).isEqualTo(1);
        assertThat(view.changes().abandoned()).isEqualTo(1);
        assertThat(view.changes().lastOutcome()).startsWith("abandoned: timeout");
        assertThat(first.status().budgetBytesUsed()).as("its staged rows returned to the shared budget").isEqualTo(budgetBefore);
        // a later change may start again
        assertThat(metadata.changeScope(NEW, 1_000).generation()).isEqualTo(2);
    }

    @Test
    @DisplayName("IDX-6 the serving scope again is 'current': nothing starts")
    void sameScope() {
        assertThat(metadata.changeScope(Scope.of(List.of(NS_A)), 1_000))
                .isEqualTo(new IncarnationStatus.ScopeChange(1, OLD.digest().hex(), "current"));
        assertThat(opened).hasSize(1);
        assertThat(scopes.pending()).isEmpty();
    }

    @Test
    @DisplayName("IDX-6 INV-7 a fence abandons the pending generation without resuming; later changes are MEMBERSHIP_EXPIRED")
    void fenceAbandons() {
        metadata.changeScope(NEW, 60_000);
        FakeSubscriber pending = last();
        scopes.subscriber().fence();
        membership.fence();
        assertThat(pending.ended).isEqualTo("closed");
        assertThat(last()).as("no session resumes after a fence").isSameAs(pending);
        assertThat(metadata.status(10, null, 0).scope().changes().lastOutcome()).isEqualTo("abandoned: fenced");
        refused(() -> metadata.changeScope(Scope.all(), 1_000), ApiError.MEMBERSHIP_EXPIRED);
    }

    @Test
    @DisplayName("IDX-6 API-5 an await waiting with the old scope digest ends SCOPE_DIGEST_MISMATCH at the switch")
    void awaitAcrossSwap() throws Exception {
        CompletableFuture<Object> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return metadata.await(new AwaitRequest(new InventoryFence(ClusterIdentity.PROTOCOL, TestMembership.CLUSTER.uuid(),
                        peer, 50), OLD.digest(), 20_000));
            } catch (MetadataRefusal e) {
                return ApiException.of(e).error();
            } catch (InterruptedException e) {
                return e;
            }
        });
        metadata.changeScope(NEW, 60_000);
        install(last().receiver, NEW, new UUID(2, 1), 12, List.of(put(NS_B, 2, 12)));
        scopes.poll();
        assertThat(scopes.current().number()).isEqualTo(2);
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo(ApiError.SCOPE_DIGEST_MISMATCH);
    }
}
