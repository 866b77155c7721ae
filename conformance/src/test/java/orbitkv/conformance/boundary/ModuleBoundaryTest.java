package orbitkv.conformance.boundary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleReader;
import java.lang.module.ResolvedModule;
import java.lang.reflect.InaccessibleObjectException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The module boundary gate (DESIGN §2): every orbitkv module's descriptor is checked against the tables in
 * docs/architecture.md, the only source of the export allowlist and of the expected requires graph.
 */
@Tag("unit")
class ModuleBoundaryTest {
    private static final String PREFIX = "orbitkv.";
    private static Map<String, Set<String>> allowedExports;
    private static Map<String, Set<String>> expectedRequires;
    private static Map<String, Set<String>> allowedOtherRequires;
    private static Map<String, Set<String>> allowedTransitive;

    @BeforeAll
    static void readArchitecture() {
        var doc = MarkdownTable.root().resolve("docs/architecture.md");
        allowedExports = table(doc, "boundary-gate:exports", 1);
        expectedRequires = table(doc, "boundary-gate:requires", 1);
        allowedOtherRequires = table(doc, "boundary-gate:libraries", 1);
        allowedTransitive = table(doc, "boundary-gate:libraries", 2);
    }

    private static Map<String, Set<String>> table(java.nio.file.Path doc, String name, int column) {
        Map<String, Set<String>> result = new TreeMap<>();
        for (List<String> row : MarkdownTable.rows(doc, name)) {
            result.put(row.get(0), new TreeSet<>(MarkdownTable.list(row.get(column))));
        }
        return result;
    }

    /** The orbitkv modules of the boot layer; the test itself must run in a named module among them. */
    private static Map<String, Module> orbitkvModules() {
        Module self = ModuleBoundaryTest.class.getModule();
        assertThat(self.isNamed())
                .as("conformance tests must run as module orbitkv.conformance, not on the class path")
                .isTrue();
        Map<String, Module> modules = new TreeMap<>();
        for (Module m : self.getLayer().modules()) {
            if (m.getName().startsWith(PREFIX)) {
                modules.put(m.getName(), m);
            }
        }
        return modules;
    }

    @Test
    @DisplayName("every module in docs/architecture.md is present as a named module, and no other orbitkv module exists")
    void modulesMatchTheTable() {
        assertThat(orbitkvModules().keySet()).isEqualTo(allowedExports.keySet());
        assertThat(expectedRequires.keySet()).isEqualTo(allowedExports.keySet());
        assertThat(allowedOtherRequires.keySet()).isEqualTo(allowedExports.keySet());
    }

    @Test
    @DisplayName("(a) exported packages equal the allowlist; no qualified exports")
    void exportsEqualAllowlist() {
        Map<String, Set<String>> actual = new TreeMap<>();
        List<String> qualified = new ArrayList<>();
        for (Module m : orbitkvModules().values()) {
            Set<String> unqualified = new TreeSet<>();
            for (ModuleDescriptor.Exports e : m.getDescriptor().exports()) {
                if (e.isQualified()) {
                    qualified.add(m.getName() + " exports " + e.source() + " to " + e.targets());
                } else {
                    unqualified.add(e.source());
                }
            }
            actual.put(m.getName(), unqualified);
        }
        assertThat(actual).as("exports per module vs docs/architecture.md allowlist").isEqualTo(allowedExports);
        assertThat(qualified).as("qualified exports (none are allowlisted)").isEmpty();
    }

    @Test
    @DisplayName("(b) no open module and no unqualified opens")
    void noUnqualifiedOpens() {
        List<String> violations = new ArrayList<>();
        for (Module m : orbitkvModules().values()) {
            ModuleDescriptor d = m.getDescriptor();
            if (d.isOpen()) {
                violations.add(m.getName() + " is an open module");
            }
            for (ModuleDescriptor.Opens o : d.opens()) {
                if (!o.isQualified()) {
                    violations.add(m.getName() + " opens " + o.source() + " to everyone");
                }
            }
        }
        assertThat(violations).isEmpty();
    }

    @Test
    @DisplayName("(c) requires edges among orbitkv modules equal DESIGN §2 and have no cycle")
    void requiresGraph() {
        Map<String, Set<String>> actual = new TreeMap<>();
        for (Module m : orbitkvModules().values()) {
            actual.put(m.getName(), m.getDescriptor().requires().stream()
                    .map(ModuleDescriptor.Requires::name)
                    .filter(n -> n.startsWith(PREFIX))
                    .collect(Collectors.toCollection(TreeSet::new)));
        }
        assertThat(actual).as("requires among orbitkv modules vs docs/architecture.md").isEqualTo(expectedRequires);
        assertThat(findCycle(actual)).as("a requires cycle").isEmpty();
    }

    @Test
    @DisplayName("(e) requires of libraries and JDK modules equal the allowlist; every requires transitive is allowlisted")
    void librariesAndTransitiveEdges() {
        Map<String, Set<String>> other = new TreeMap<>();
        Map<String, Set<String>> transitive = new TreeMap<>();
        for (Module m : orbitkvModules().values()) {
            Set<String> o = new TreeSet<>();
            Set<String> t = new TreeSet<>();
            for (ModuleDescriptor.Requires r : m.getDescriptor().requires()) {
                if (r.modifiers().contains(ModuleDescriptor.Requires.Modifier.MANDATED)) {
                    continue; // java.base
                }
                if (!r.name().startsWith(PREFIX)) {
                    o.add(r.name());
                }
                if (r.modifiers().contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE)) {
                    t.add(r.name());
                }
            }
            other.put(m.getName(), o);
            transitive.put(m.getName(), t);
        }
        assertThat(other).as("requires of libraries and JDK modules vs docs/architecture.md").isEqualTo(allowedOtherRequires);
        assertThat(transitive).as("requires transitive vs docs/architecture.md").isEqualTo(allowedTransitive);
    }

    @Test
    @DisplayName("(f) every type an exported signature names is exported by the module itself, by a module it requires "
            + "transitive (implied readability), or by java.base")
    void exportedSignaturesNameOnlyReadableTypes() throws IOException {
        List<String> leaks = new ArrayList<>();
        int walked = 0;
        for (Module m : orbitkvModules().values()) {
            SignatureWalk walk = new SignatureWalk(m);
            for (String className : classesOf(m)) {
                String pkg = className.substring(0, className.lastIndexOf('.'));
                if (m.getDescriptor().exports().stream().noneMatch(e -> !e.isQualified() && e.source().equals(pkg))) {
                    continue;
                }
                Class<?> c = Class.forName(m, className);
                if (c != null && SignatureWalk.visible(c)) {
                    walk.type(c);
                    walked++;
                }
            }
            leaks.addAll(walk.leaks());
        }
        assertThat(walked).as("exported types walked (the gate must have something to check)").isPositive();
        assertThat(leaks).as("types in exported signatures that a reader of the module cannot read").isEmpty();
    }

    @Test
    @DisplayName("the signature walk itself finds a planted leak: a java.base type passes, an unexported one does not")
    void signatureWalkFindsAPlantedLeak() {
        Module inventory = orbitkvModules().get("orbitkv.inventory");
        SignatureWalk walk = new SignatureWalk(inventory);
        walk.type(PlantedLeak.class);
        assertThat(walk.leaks()).singleElement().asString()
                .contains("PlantedLeak").contains("java.util.logging.Logger").contains("java.logging");
    }

    /** Not exported, not an orbitkv type: walked only to show that the walk reports the JDK type it names. */
    public interface PlantedLeak {
        java.util.logging.Logger logger();

        java.util.List<String> fine();
    }

    @Test
    @DisplayName("(d) a conformance test can use no class of a non-exported package, reflectively or otherwise")
    void nonExportedPackagesAreSealed() throws IOException {
        Module self = ModuleBoundaryTest.class.getModule();
        int checked = 0;
        for (Module m : orbitkvModules().values()) {
            if (m == self) {
                continue;
            }
            Set<String> exported = m.getDescriptor().exports().stream()
                    .filter(e -> !e.isQualified()).map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
            for (String className : classesOf(m)) {
                String pkg = className.substring(0, className.lastIndexOf('.'));
                if (exported.contains(pkg)) {
                    continue;
                }
                assertThat(m.isExported(pkg, self)).as("%s exported to conformance", pkg).isFalse();
                assertThat(m.isOpen(pkg, self)).as("%s opened to conformance", pkg).isFalse();
                Class<?> c = Class.forName(m, className);
                if (c == null) {
                    continue; // not loadable at all: even stronger
                }
                assertThatThrownBy(() -> MethodHandles.privateLookupIn(c, MethodHandles.lookup()))
                        .as("private lookup into %s", className).isInstanceOf(IllegalAccessException.class);
                if (c.getDeclaredConstructors().length > 0) {
                    assertThatThrownBy(() -> c.getDeclaredConstructors()[0].setAccessible(true))
                            .as("setAccessible on %s", className).isInstanceOf(InaccessibleObjectException.class);
                }
                checked++;
            }
        }
        assertThat(checked).as("internal classes checked (the gate must have something to check)").isPositive();
    }

    private static List<String> classesOf(Module m) throws IOException {
        ResolvedModule resolved = m.getLayer().configuration().findModule(m.getName()).orElseThrow();
        try (ModuleReader reader = resolved.reference().open()) {
            return reader.list()
                    .filter(n -> n.endsWith(".class") && !n.endsWith("module-info.class") && !n.startsWith("META-INF/"))
                    .map(n -> n.substring(0, n.length() - ".class".length()).replace('/', '.'))
                    .sorted().toList();
        }
    }

    private static List<String> findCycle(Map<String, Set<String>> graph) {
        Map<String, Integer> state = new LinkedHashMap<>(); // 1 = on stack, 2 = done
        List<String> stack = new ArrayList<>();
        for (String start : graph.keySet()) {
            List<String> cycle = dfs(start, graph, state, stack);
            if (!cycle.isEmpty()) {
                return cycle;
            }
        }
        return List.of();
    }

    private static List<String> dfs(String node, Map<String, Set<String>> graph, Map<String, Integer> state, List<String> stack) {
        Integer s = state.get(node);
        if (s != null && s == 2) {
            return List.of();
        }
        if (s != null && s == 1) {
            List<String> cycle = new ArrayList<>(stack.subList(stack.indexOf(node), stack.size()));
            cycle.add(node);
            return cycle;
        }
        state.put(node, 1);
        stack.add(node);
        for (String next : graph.getOrDefault(node, new HashSet<>())) {
            List<String> cycle = dfs(next, graph, state, stack);
            if (!cycle.isEmpty()) {
                return cycle;
            }
        }
        stack.remove(stack.size() - 1);
        state.put(node, 2);
        return List.of();
    }

    @Test
    @DisplayName("the cycle detector itself finds a planted cycle")
    void cycleDetectorWorks() {
        Map<String, Set<String>> g = new TreeMap<>();
        g.put("a", Set.of("b"));
        g.put("b", Set.of("c"));
        g.put("c", Set.of("a"));
        if (findCycle(g).isEmpty()) {
            fail("cycle a->b->c->a not detected");
        }
        assertThat(findCycle(Map.of("a", Set.of("b"), "b", Set.of()))).isEmpty();
    }
}
