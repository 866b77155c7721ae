package orbitkv.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.core.util.RecyclerPool;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The HTTP handlers run on virtual threads: their mappers recycle buffers across threads (Jackson's default
 * thread-local pool would hand every new virtual thread fresh buffers), in a pool bounded per mapper.
 */
@Tag("unit")
@Timeout(30)
class JsonMapperRecyclingTest {
    @Test
    @DisplayName("a buffer recycler released on one virtual thread is the one the next virtual thread gets")
    void recycledAcrossVirtualThreads() throws InterruptedException {
        ObjectMapper mapper = JsonRequests.newMapper();
        RecyclerPool<BufferRecycler> pool = mapper.getFactory()._getRecyclerPool();
        AtomicReference<BufferRecycler> first = new AtomicReference<>();
        AtomicReference<BufferRecycler> second = new AtomicReference<>();
        Thread.ofVirtual().start(() -> {
            BufferRecycler r = pool.acquireAndLinkPooled();
            first.set(r);
            r.releaseToPool();
        }).join();
        Thread.ofVirtual().start(() -> second.set(pool.acquireAndLinkPooled())).join();
        assertThat(second.get()).isNotNull().isSameAs(first.get());
    }

    @Test
    @DisplayName("the pool keeps at most BUFFER_RECYCLERS_MAX recyclers")
    void bounded() {
        RecyclerPool<BufferRecycler> pool = JsonRequests.newMapper().getFactory()._getRecyclerPool();
        BufferRecycler[] held = new BufferRecycler[JsonRequests.BUFFER_RECYCLERS_MAX + 8];
        for (int i = 0; i < held.length; i++) {
            held[i] = pool.acquireAndLinkPooled();
        }
        for (BufferRecycler r : held) {
            r.releaseToPool();
        }
        assertThat(pool.pooledCount()).isEqualTo(JsonRequests.BUFFER_RECYCLERS_MAX);
    }
}
