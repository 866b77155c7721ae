package orbitkv.server.incarnation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.index.Coverage;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventoryFence;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StateKey;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The distributed answers of query, sync, await, status and health over a real GlobalIndex and InventorySource. */
@Tag("unit")
class ClusterMetadataTest {
    private static final Namespace NS = Namespace.utf8("model-a");
    private static final Scope SCOPE = Scope.of(List.of(NS));

    private final Incarnation self = TestMembership.incarnation("a", 1);
    private final Incarnation peer = TestMembership.incarnation("b", 3);
    private TestMembership membership;
    private InventorySource source;
    private ClusterMetadata metadata;

    @BeforeEach
    void setUp() {
        membership = new TestMembership(self);
        source = InventorySource.create(InventoryConfig.defaults());
        GlobalIndex index = GlobalIndex.create(self, SCOPE, IndexConfig.defaults(), System::nanoTime, Runnable::run);
        metadata = new ClusterMetadata(membership, index, source, SCOPE, 4);
        membership.addListener(metadata::onMembershipEvent);
        membership.change(TestMembership.view(2, true, List.of(self, peer)));
    }

    private AwaitRequest await(UUID cluster, Incarnation src, long sequence, ScopeDigest digest, long timeoutMs) {
        return new AwaitRequest(new InventoryFence(ClusterIdentity.PROTOCOL, cluster, src, sequence), digest, timeoutMs);
    }

    private AwaitRequest await(Incarnation src, long sequence, long timeoutMs) {
        return await(TestMembership.CLUSTER.uuid(), src, sequence, SCOPE.digest(), timeoutMs);
    }

    private static void refused(ThrowableAssert.ThrowingCallable call, ApiError code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(MetadataRefusal.class,
                e -> assertThat(ApiException.of(e).error()).isEqualTo(code));
    }

    @Test
    @DisplayName("API-5 await refuses a cluster mismatch (409), another scope digest (409) and a replaced incarnation (409)")
    void awaitRefusals() {
        refused(() -> metadata.await(await(new UUID(9, 9), peer, 1, SCOPE.digest(), 100)), ApiError.CLUSTER_MISMATCH);
        refused(() -> metadata.await(await(TestMembership.CLUSTER.uuid(), peer, 1, Scope.all().digest(), 100)),
                ApiError.SCOPE_DIGEST_MISMATCH);
        Incarnation older = TestMembership.incarnation("b", 2);
        refused(() -> metadata.await(await(older, 1, 100)), ApiError.OLD_INCARNATION);
        assertThat(ApiError.CLUSTER_MISMATCH.status()).isEqualTo(409);
        assertThat(ApiError.OLD_INCARNATION.status()).isEqualTo(409);
    }

    @Test
    @DisplayName("API-4 await of an admitted source without an installed view times out (408); an unknown one is NOT_ADMITTED (409)")
    void awaitTimeouts() {
        refused(() -> metadata.await(await(peer, 1, 50)), ApiError.AWAIT_TIMEOUT);
        refused(() -> metadata.await(await(TestMembership.incarnation("c", 1), 1, 50)), ApiError.NOT_ADMITTED);
        assertThat(ApiError.AWAIT_TIMEOUT.status()).isEqualTo(408);
    }

    @Test
    @DisplayName("API-5 IDX-13 a waiter whose source is replaced in membership fails at once with OLD_INCARNATION")
    void awaitSourceReplaced() throws Exception {
        CompletableFuture<Object> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return metadata.await(await(peer, 5, 20_000));
            } catch (MetadataRefusal e) {
                return ApiException.of(e).error();
            } catch (InterruptedException e) {
                return e;
            }
        });
        Incarnation replacement = TestMembership.incarnation("b", 4);
        // The membership event wakes the waiter whenever it is delivered, before or during its wait.
        membership.change(TestMembership.view(3, true, List.of(self, replacement)));
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo(ApiError.OLD_INCARNATION);
    }

    @Test
    @DisplayName("INV-7 INV-10 once fenced: await and sync refuse with MEMBERSHIP_EXPIRED (503), query is Unavailable, health fenced")
    void fenced() {
        assertThat(metadata.healthStatus()).isEqualTo("ok");
        membership.fence();
        refused(() -> metadata.await(await(peer, 1, 100)), ApiError.MEMBERSHIP_EXPIRED);
        refused(() -> metadata.fence(), ApiError.MEMBERSHIP_EXPIRED);
        assertThat(ApiError.MEMBERSHIP_EXPIRED.status()).isEqualTo(503);
        assertThat(metadata.lookup(NS, List.of(key(1))).coverage()).isEqualTo(Coverage.Unavailable);
        assertThat(metadata.healthStatus()).isEqualTo("fenced");
        assertThat(metadata.status(10, null, 0).coverage()).isEqualTo("Unavailable");
    }

    @Test
    @DisplayName("MEM-9 a suspended membership makes health degraded, query Unavailable and await METADATA_UNAVAILABLE")
    void suspended() {
        membership.change(TestMembership.view(3, false, List.of()));
        assertThat(metadata.healthStatus()).isEqualTo("degraded");
        assertThat(metadata.lookup(NS, List.of(key(1))).coverage()).isEqualTo(Coverage.Unavailable);
        refused(() -> metadata.await(await(peer, 1, 100)), ApiError.METADATA_UNAVAILABLE);
    }

    @Test
    @DisplayName("IDX-5 IDX-7 IDX-13 a member without an installed view gives PartialHints; outside the scope is Unavailable")
    void queryCoverage() {
        DistributedMetadata.Lookup in = metadata.lookup(NS, List.of(key(1), key(2)));
        assertThat(in.coverage()).isEqualTo(Coverage.PartialHints);
        assertThat(in.replicas()).containsExactly(List.of(), List.of());
        DistributedMetadata.Lookup out = metadata.lookup(Namespace.utf8("other"), List.of(key(1)));
        assertThat(out.coverage()).isEqualTo(Coverage.Unavailable);
        membership.change(TestMembership.view(4, true, List.of(self)));
        assertThat(metadata.lookup(NS, List.of(key(1))).coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
    }

    @Test
    @DisplayName("API-1 API-2 sync's fence names this cluster, incarnation and the source head; an own fence awaits locally")
    void syncFence() throws Exception {
        source.put(new StateKey(NS, new byte[] {1}), Medium.DRAM, 10);
        source.put(new StateKey(NS, new byte[] {2}), Medium.DRAM, 10);
        IncarnationStatus.Fence f = metadata.fence().orElseThrow();
        assertThat(f.protocol()).isEqualTo(ClusterIdentity.PROTOCOL);
        assertThat(f.clusterUuid()).isEqualTo(TestMembership.CLUSTER.uuid().toString());
        assertThat(f.sourceIncarnation()).isEqualTo(self.toString());
        assertThat(f.sourceNodeEpoch()).isEqualTo(1);
        assertThat(f.inventorySequence()).isEqualTo(2);
        IncarnationStatus.AwaitResponse own = metadata.await(await(self, 2, 100));
        assertThat(own.appliedSequence()).isEqualTo(2);
        assertThat(own.viewId()).isEqualTo(ClusterMetadata.LOCAL_VIEW_ID);
        refused(() -> metadata.await(await(self, 3, 100)), ApiError.INVALID_FIELD_VALUE);
    }

    @Test
    @DisplayName("DIAG-1 status reports cluster, scope, membership, inventory journal and paginated owners")
    void status() {
        source.put(new StateKey(NS, new byte[] {1}), Medium.DRAM, 10);
        IncarnationStatus.StatusResponse s = metadata.status(1, null, 0);
        assertThat(s.cluster().uuid()).isEqualTo(TestMembership.CLUSTER.uuid().toString());
        assertThat(s.membership().members()).isEqualTo(2);
        assertThat(s.membership().valid()).isTrue();
        assertThat(s.scope().digest()).isEqualTo(SCOPE.digest().hex());
        assertThat(s.scope().namespaces()).isEqualTo(List.of("model-a"));
        assertThat(s.inventory().headSequence()).isEqualTo(1);
        assertThat(s.inventory().journalBytes()).isPositive();
        assertThat(s.inventory().lastPublication().sequence()).isEqualTo(1);
        assertThat(s.owners()).hasSize(1);
        assertThat(s.owners().getFirst().owner().incarnation()).isEqualTo(peer.toString());
        assertThat(s.owners().getFirst().state()).isEqualTo("AWAITING");
        refused(() -> metadata.status(1, "not-a-token", 0), ApiError.INVALID_QUERY_PARAMETER);
    }

    private static StateKey key(int i) {
        return new StateKey(NS, new byte[] {(byte) i});
    }
}
