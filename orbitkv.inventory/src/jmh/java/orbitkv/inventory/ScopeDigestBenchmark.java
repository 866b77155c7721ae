package orbitkv.inventory;

import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** Cost of canonicalizing and digesting a maximal explicit scope (256 namespaces), done once per Open. */
@State(Scope.Benchmark)
public class ScopeDigestBenchmark {
    List<Namespace> namespaces;

    @Setup
    public void setup() {
        namespaces = new ArrayList<>();
        for (int i = 0; i < orbitkv.inventory.Scope.MAX_NAMESPACES; i++) {
            namespaces.add(Namespace.utf8("model-" + (997 * i % 256) + "-representation"));
        }
    }

    @Benchmark
    public ScopeDigest canonicalizeAndDigest256() {
        return orbitkv.inventory.Scope.of(namespaces).digest();
    }
}
