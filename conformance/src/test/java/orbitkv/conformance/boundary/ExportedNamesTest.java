package orbitkv.conformance.boundary;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleReader;
import java.lang.module.ResolvedModule;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Unique names across the module contracts (issue 34 item 3): a reader who sees {@code ReadOutcome} or
 * {@code RouteClass} in a signature must not have to look at the import to know which one. No two public top-level
 * types of the exported packages share a simple name, and no public nested type of an exported type takes the
 * simple name of a top-level exported type of another package.
 *
 * <p>The generated wire contracts ({@code orbitkv.inventory.wire}, {@code orbitkv.transfer.wire}) are left out on
 * purpose: their names are the .proto files' (docs/protocol.md, docs/transfer.md), each scoped by its proto package,
 * and renaming a message to suit Java would change the published schema for every other implementation.
 */
@Tag("unit")
class ExportedNamesTest {
    private static final String PREFIX = "orbitkv.";
    /** Generated protobuf/gRPC packages: named by their .proto schemas, not by this rule (see the class comment). */
    private static final Set<String> GENERATED_WIRE = Set.of("orbitkv.inventory.wire", "orbitkv.transfer.wire");

    @Test
    @DisplayName("no two exported top-level types share a simple name; no nested exported type shadows one of another package")
    void exportedSimpleNamesAreUnique() throws IOException {
        List<Class<?>> topLevel = new ArrayList<>();
        List<Class<?>> nested = new ArrayList<>();
        for (Module m : ModuleBoundaryTest.class.getModule().getLayer().modules()) {
            if (!m.getName().startsWith(PREFIX)) {
                continue;
            }
            Set<String> exported = new TreeSet<>();
            for (ModuleDescriptor.Exports e : m.getDescriptor().exports()) {
                if (!e.isQualified() && !GENERATED_WIRE.contains(e.source())) {
                    exported.add(e.source());
                }
            }
            for (String name : classNames(m)) {
                String pkg = name.substring(0, name.lastIndexOf('.'));
                Class<?> c = exported.contains(pkg) ? Class.forName(m, name) : null;
                if (c != null && publicAllTheWay(c)) {
                    (c.isMemberClass() ? nested : topLevel).add(c);
                }
            }
        }
        assertThat(topLevel).as("exported top-level types found (the gate must have something to check)").hasSizeGreaterThan(100);
        assertThat(duplicates(topLevel)).as("exported top-level types sharing a simple name").isEmpty();
        assertThat(shadows(topLevel, nested)).as("nested exported types named like a top-level exported type elsewhere").isEmpty();
    }

    @Test
    @DisplayName("the check itself finds planted duplicates: two top-level types of one simple name, and a nested shadow")
    void checkFindsPlantedDuplicates() {
        assertThat(duplicates(List.of(java.lang.reflect.Proxy.class, java.net.Proxy.class, String.class)))
                .containsOnlyKeys("Proxy");
        assertThat(shadows(List.of(java.util.Map.class), List.of(java.util.AbstractMap.SimpleEntry.class, Map.Entry.class)))
                .isEmpty();
        assertThat(shadows(List.of(java.util.Map.class, java.util.Map.Entry.class), List.of(java.util.Map.Entry.class)))
                .as("a nested type of the same package is not a shadow").isEmpty();
        assertThat(shadows(List.of(orbitkv.testing.Await.class), List.of(Character.UnicodeBlock.class, PlantedShadow.Await.class)))
                .singleElement().asString().contains("PlantedShadow$Await").contains("orbitkv.testing.Await");
    }

    /** Not exported: a nested type named like a top-level one, for the planted check only. */
    static final class PlantedShadow {
        interface Await {} // shadows orbitkv.testing.Await (a repository type, so docs' `String.x` stays the JDK's)
    }

    /** Simple name → the types that share it, for every name used more than once. */
    static Map<String, List<String>> duplicates(Collection<Class<?>> types) {
        Map<String, List<String>> byName = new TreeMap<>();
        for (Class<?> c : types) {
            byName.computeIfAbsent(c.getSimpleName(), k -> new ArrayList<>()).add(c.getName());
        }
        byName.values().removeIf(l -> l.size() < 2);
        return byName;
    }

    /** Nested types whose simple name is a top-level type's of another package: "nested shadows top". */
    static List<String> shadows(Collection<Class<?>> topLevel, Collection<Class<?>> nested) {
        Map<String, List<Class<?>>> tops = new TreeMap<>();
        for (Class<?> c : topLevel) {
            tops.computeIfAbsent(c.getSimpleName(), k -> new ArrayList<>()).add(c);
        }
        List<String> found = new ArrayList<>();
        for (Class<?> n : nested) {
            for (Class<?> t : tops.getOrDefault(n.getSimpleName(), List.of())) {
                if (!t.getPackageName().equals(n.getPackageName())) {
                    found.add(n.getName() + " shadows " + t.getName());
                }
            }
        }
        return found;
    }

    private static boolean publicAllTheWay(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
            if (!Modifier.isPublic(k.getModifiers())) {
                return false;
            }
        }
        return !c.isAnonymousClass() && !c.isLocalClass() && !c.isSynthetic();
    }

    private static List<String> classNames(Module m) throws IOException {
        ResolvedModule resolved = m.getLayer().configuration().findModule(m.getName()).orElseThrow();
        try (ModuleReader reader = resolved.reference().open()) {
            return reader.list()
                    .filter(n -> n.endsWith(".class") && !n.endsWith("module-info.class") && !n.startsWith("META-INF/")
                            && !n.endsWith("package-info.class"))
                    .map(n -> n.substring(0, n.length() - ".class".length()).replace('/', '.'))
                    .toList();
        }
    }
}
