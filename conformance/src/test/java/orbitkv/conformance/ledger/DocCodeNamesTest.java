package orbitkv.conformance.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 34 item 4: every code name the documentation puts in backticks resolves to the code, so a renamed or moved
 * class, a removed method or a dropped option shows up as a failure naming the page, the line and the name.
 *
 * <p><b>What counts as a code name.</b> An inline code span (fenced blocks are examples and are not read) in
 * README.md or a page under docs/ (docs/results/ holds immutable run records written against the code of their
 * day, and is not read), trimmed, with a trailing argument list {@code (...)} dropped, that is exactly one of:
 * <ul>
 *   <li>a <b>type</b>: a capitalised identifier with a lower-case letter ({@code PlannedRestore}, {@code Demand});
 *       it must be a Java type declared in this repository (top-level or nested, main, test or JMH sources), a
 *       message, service, enum or rpc of a .proto file, a JDK or library type this build resolves by reflection,
 *       or an entry of {@link #NOT_CODE};</li>
 *   <li>a <b>member chain</b> {@code Type.member}, {@code Type.Nested.member}, {@code Type#member} or
 *       {@code Type.CONSTANT}: the type resolves as above and each later segment is a nested type or an
 *       identifier of a file declaring the previous type (for a JDK or library type: a public method or field);</li>
 *   <li>a <b>qualified name</b> {@code orbitkv.x.y[.Type[.member]]}: a Java or proto package or a module of this
 *       repository, then the chain as above;</li>
 * </ul>
 * and, in <b>any</b> inline span, each {@code --flag} token must be a {@code Setting}, a picocli option of a command
 * of this repository, a flag a script under scripts/ parses, or a flag of another program listed in
 * {@link #EXTERNAL_FLAGS}. Everything else in backticks (JSON fields, metric names, header names, shell commands,
 * values, paths) is not a code name and is not checked here: metric and JSON names have their own tests.
 */
@Tag("unit")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DocCodeNamesTest {
    /** Inline code spans (a fenced block is skipped by the caller). */
    private static final Pattern SPAN = Pattern.compile("`([^`\\n]+)`");
    private static final Pattern FENCE = Pattern.compile("^\\s*```");
    private static final Pattern FLAG = Pattern.compile("(?<![\\w-])--[a-z0-9][a-z0-9-]*");
    private static final Pattern TYPE = Pattern.compile("[A-Z](?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]*");
    private static final Pattern CHAIN = Pattern.compile("([A-Z](?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]*)((?:[.#][A-Za-z_][A-Za-z0-9_]*)+)");
    private static final Pattern QUALIFIED = Pattern.compile("orbitkv(?:\\.[a-z][a-z0-9_]*)+((?:\\.[A-Z][A-Za-z0-9_]*)(?:\\.[A-Za-z_][A-Za-z0-9_]*)*)?");
    private static final Pattern ARGUMENTS = Pattern.compile("\\(.*\\)$");
    /** Packages searched by reflection for JDK and library types named without their package. */
    private static final List<String> LIBRARY_PACKAGES = List.of("java.lang", "java.util", "java.util.concurrent",
            "java.util.concurrent.atomic", "java.util.concurrent.locks", "java.util.function", "java.util.zip", "java.io",
            "java.nio", "java.nio.channels", "java.nio.file", "java.net", "java.security", "java.lang.foreign",
            "java.lang.invoke", "java.time", "javax.net.ssl", "io.netty.buffer", "io.netty.channel", "io.netty.handler.ssl",
            "io.netty.handler.stream", "io.netty.handler.flow", "io.netty.handler.codec.http", "io.grpc", "io.grpc.stub",
            "io.grpc.netty", "com.google.protobuf", "com.fasterxml.jackson.core", "com.fasterxml.jackson.databind",
            "org.junit.jupiter.api");
    /**
     * Library types named in the docs that this test's module path does not resolve, each with its owner. Extend
     * only with a type of a dependency the build really uses.
     */
    static final Map<String, String> LIBRARY_TYPES = Map.ofEntries(
            // the engines' own interfaces the Python backends implement (issue 36; not installed here)
            Map.entry("LMCacheConnectorV1", "vLLM's LMCache connector"),
            Map.entry("LMCacheMPConnector", "vLLM's LMCache multi-process connector"),
            Map.entry("RemoteConnector", "LMCache"),
            Map.entry("CreateConnector", "LMCache"),
            Map.entry("ExceptionGroup", "Python 3.11 standard library (named as what the client avoids)"),
            Map.entry("SslHandler", "netty-handler"),
            Map.entry("ChunkedNioFile", "netty-handler"),
            Map.entry("FlowControlHandler", "netty-handler"),
            Map.entry("SslContext", "netty-handler"),
            Map.entry("GrpcSslContexts", "grpc-netty"),
            Map.entry("StreamObserver", "grpc-stub"),
            Map.entry("ManagedChannel", "grpc-api"),
            Map.entry("CompactedException", "jetcd-core"),
            Map.entry("StatusRuntimeException", "grpc-api"),
            Map.entry("ClientCalls", "grpc-stub"),
            Map.entry("PickFirstLoadBalancer", "grpc-core"),
            Map.entry("ListenableFuture", "guava"),
            Map.entry("Hashing", "guava"),
            Map.entry("GenericContainer", "testcontainers (named as the alternative not taken)"),
            Map.entry("SampleTime", "JMH Mode"),
            Map.entry("Level", "JMH setup level"),
            Map.entry("Unsafe", "jdk.internal.misc (a profile frame)"),
            Map.entry("Bits", "java.nio, package-private (a profile frame)"),
            Map.entry("LeaseGrant", "etcd v3 API rpc"),
            Map.entry("LeaseKeepAlive", "etcd v3 API rpc"),
            Map.entry("LeaseRevoke", "etcd v3 API rpc"),
            Map.entry("CacheEngineKey", "LMCache"));
    /**
     * Capitalised words in backticks that are not code names of this repository: HTTP header and scheme names,
     * wire enum or status words spelled in CamelCase by the protocol pages, product names. Each is named with what
     * it is; a word that becomes a class should leave this list.
     */
    static final Map<String, String> NOT_CODE = Map.ofEntries(
            Map.entry("False", "Python literal"),
            Map.entry("Authorization", "HTTP request header"),
            Map.entry("Bearer", "HTTP authorization scheme"),
            Map.entry("Allow", "HTTP response header"),
            Map.entry("KiB", "size suffix"),
            Map.entry("MiB", "size suffix"),
            Map.entry("GiB", "size suffix"),
            Map.entry("Class.method", "placeholder of the citation form"),
            Map.entry("Class#method", "placeholder of the citation form"),
            Map.entry("orbitkv.lock", "the SSD directory's lock file"),
            Map.entry("orbitkv.test.groups", "Maven property of the test lanes"));
    /** Methods protoc generates on every message class. */
    private static final java.util.Set<String> PROTOBUF_GENERATED = java.util.Set.of("newBuilder", "getDefaultInstance",
            "parseFrom", "toByteArray", "getSerializedSize", "toBuilder", "build");
    /** Flags of other programs the docs name, each with its program. */
    static final Map<String, String> EXTERNAL_FLAGS = Map.ofEntries(
            Map.entry("--case", "the Python bench runner (clients/python/bench, python3 -m bench)"),
            Map.entry("--client-cert-auth", "etcd"),
            Map.entry("--trusted-ca-file", "etcd"),
            Map.entry("--cert-file", "etcd"),
            Map.entry("--key-file", "etcd"),
            Map.entry("--peer-client-cert-auth", "etcd"),
            Map.entry("--peer-trusted-ca-file", "etcd"),
            Map.entry("--peer-cert-file", "etcd"),
            Map.entry("--peer-key-file", "etcd"),
            Map.entry("--listen-client-urls", "etcd"),
            Map.entry("--advertise-client-urls", "etcd"),
            Map.entry("--listen-peer-urls", "etcd"),
            Map.entry("--initial-advertise-peer-urls", "etcd"),
            Map.entry("--data-dir", "etcd"),
            Map.entry("--cacert", "etcdctl"),
            Map.entry("--cert", "etcdctl"),
            Map.entry("--key", "etcdctl"),
            Map.entry("--endpoints", "etcdctl"),
            Map.entry("--wal-dir", "etcd"),
            Map.entry("--initial-cluster", "etcd"),
            Map.entry("--unix-socket", "curl"),
            Map.entry("--validate-modules", "java"),
            Map.entry("--add-options", "jlink"),
            Map.entry("--strip-debug", "jlink"),
            Map.entry("--compress", "jlink"),
            Map.entry("--user", "unshare"),
            Map.entry("--map-root-user", "unshare"),
            Map.entry("--net", "unshare"),
            Map.entry("--mount", "unshare"),
            Map.entry("--events", "jfr (the JDK's flight-recording tool: jfr print --events)"));

    private static CodeIndex code;
    private static List<Path> pages;

    @BeforeAll
    static void index() throws IOException {
        Path root = MarkdownTable.root();
        code = new CodeIndex(root);
        try (Stream<Path> s = Files.walk(root.resolve("docs"))) {
            List<Path> docs = new ArrayList<>(s.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> !root.relativize(p).startsWith("docs/results")).sorted().toList());
            docs.add(0, root.resolve("README.md"));
            pages = docs;
        }
    }

    @Test
    @DisplayName("issue 34 every class, Class.method, qualified name and --option in backticks in README.md and docs/ resolves to the code")
    void everyCodeNameResolves() {
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (Path page : pages) {
            for (Unresolved u : unresolved(code.root.relativize(page).toString(), CodeIndex.read(page))) {
                missing.add(u.toString());
            }
            checked += checkedNames;
        }
        assertThat(checked).as("code names checked (the scan must see the docs' class and option names)").isGreaterThan(500);
        assertThat(missing).as("code names in backticks that resolve to nothing in the code (page:line: name -> why); "
                + "fix the page, or, for a name that is not code, extend the commented allowlists of DocCodeNamesTest").isEmpty();
    }

    @Test
    @DisplayName("the check names a renamed class, a removed method, a moved package and a made-up option by page and line")
    void aStaleNameIsNamed() {
        String page = "Intro `CodeIndex` and `CodeIndex.declaresMember` resolve.\n"
                + "`NoSuchRestoreClass` and `CodeIndex.noSuchMethod` and `orbitkv.server.nosuchpackage.PlannedRestore`\n"
                + "```\nNotReadInFence --not-read\n```\n`orbitkv manager --made-up-option 3` `String.isBlank` `Retry-After`\n";
        assertThat(unresolved("x.md", page).stream().map(Unresolved::toString).toList()).containsExactly(
                "x.md:2: NoSuchRestoreClass -> no such type", "x.md:2: CodeIndex.noSuchMethod -> CodeIndex declares no noSuchMethod",
                "x.md:2: orbitkv.server.nosuchpackage.PlannedRestore -> no package orbitkv.server.nosuchpackage",
                "x.md:6: --made-up-option -> no Setting, command option, script flag or listed external flag");
    }

    record Unresolved(String page, int line, String name, String why) {
        @Override
        public String toString() {
            return page + ":" + line + ": " + name + " -> " + why;
        }
    }

    private static int checkedNames;

    /** The unresolved code names of one page, in page order. */
    static List<Unresolved> unresolved(String name, String text) {
        List<Unresolved> out = new ArrayList<>();
        checkedNames = 0;
        String[] lines = text.split("\n", -1);
        boolean fenced = false;
        for (int i = 0; i < lines.length; i++) {
            if (FENCE.matcher(lines[i]).find()) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher span = SPAN.matcher(lines[i]);
            while (span.find()) {
                String s = span.group(1).trim();
                for (String problem : check(s)) {
                    int colon = problem.indexOf(" -> ");
                    out.add(new Unresolved(name, i + 1, problem.substring(0, colon), problem.substring(colon + 4)));
                }
            }
        }
        return out;
    }

    /** Problems of one span, each "name -> why". */
    private static List<String> check(String span) {
        List<String> problems = new ArrayList<>();
        Matcher flag = FLAG.matcher(span);
        while (flag.find()) {
            checkedNames++;
            String f = flag.group();
            boolean prefix = f.endsWith("-") && code.flags.stream().anyMatch(k -> k.startsWith(f)); // --peer-tls-*
            if (!prefix && !code.flags.contains(f) && !EXTERNAL_FLAGS.containsKey(f)) {
                problems.add(flag.group() + " -> no Setting, command option, script flag or listed external flag");
            }
        }
        String bare = ARGUMENTS.matcher(span).replaceFirst("");
        String s = bare.startsWith("@") ? bare.substring(1) : bare; // an annotation names its type
        if (NOT_CODE.containsKey(s)) {
            return problems;
        }
        if (QUALIFIED.matcher(s).matches()) {
            checkedNames++;
            qualified(s).ifPresent(why -> problems.add(s + " -> " + why));
        } else if (TYPE.matcher(s).matches() || CHAIN.matcher(s).matches()) {
            checkedNames++;
            List<String> parts = Arrays.asList(s.split("[.#]"));
            chain(parts.get(0), parts.subList(1, parts.size())).ifPresent(why -> problems.add(s + " -> " + why));
        }
        return problems;
    }

    /** Why a qualified name does not resolve, if it does not. */
    private static Optional<String> qualified(String s) {
        String[] parts = s.split("\\.");
        int firstType = 0;
        while (firstType < parts.length && !Character.isUpperCase(parts[firstType].charAt(0))) {
            firstType++;
        }
        String pkg = String.join(".", Arrays.copyOfRange(parts, 0, firstType));
        if (!code.packages.contains(pkg) && !code.modules.contains(pkg) && !code.protoPackages.contains(pkg)) {
            return Optional.of("no package " + pkg);
        }
        if (firstType == parts.length) {
            return Optional.empty();
        }
        boolean proto = code.protoPackages.contains(pkg) && code.protoNames.contains(parts[firstType]);
        if (!proto && !code.qualified.contains(pkg + "." + parts[firstType])) {
            return Optional.of("no type " + parts[firstType] + " in package " + pkg);
        }
        return chain(parts[firstType], Arrays.asList(parts).subList(firstType + 1, parts.length));
    }

    /** Why {@code type.rest...} does not resolve, if it does not. */
    private static Optional<String> chain(String type, List<String> rest) {
        boolean repo = code.types.containsKey(type) || code.protoNames.contains(type) || code.pythonTypes.containsKey(type);
        if (!repo && rest.isEmpty() && code.enumConstants.containsKey(type)) {
            return Optional.empty();
        }
        if (!repo && LIBRARY_TYPES.containsKey(type)) {
            return Optional.empty(); // listed, members not checked
        }
        Optional<Class<?>> library = repo ? Optional.empty() : library(type);
        if (!repo && library.isEmpty()) {
            return Optional.of("no such type");
        }
        String current = type;
        Class<?> currentClass = library.orElse(null);
        for (String segment : rest) {
            if (currentClass != null) {
                if (!libraryMember(currentClass, segment)) {
                    return Optional.of(current + " declares no " + segment);
                }
                return Optional.empty();
            }
            if (Character.isUpperCase(segment.charAt(0)) && code.types.containsKey(segment)
                    && !segment.chars().allMatch(c -> Character.isUpperCase(c) || Character.isDigit(c) || c == '_')) {
                current = segment;
                continue;
            }
            if (code.protoNames.contains(current) && PROTOBUF_GENERATED.contains(segment)) {
                return Optional.empty();
            }
            if (!code.declaresMember(current, segment) && !LIBRARY_TYPES.containsKey(current)) {
                return Optional.of(current + " declares no " + segment);
            }
            return Optional.empty(); // members of members (record accessors of returned types) are not followed
        }
        return Optional.empty();
    }

    private static Optional<Class<?>> library(String simple) {
        for (String pkg : LIBRARY_PACKAGES) {
            try {
                return Optional.of(Class.forName(pkg + "." + simple, false, DocCodeNamesTest.class.getClassLoader()));
            } catch (ClassNotFoundException | LinkageError e) {
                // not in this package
            }
        }
        return Optional.empty();
    }

    /** A method, field or nested class of a library type, whatever its access (profiles name private frames). */
    private static boolean libraryMember(Class<?> c, String member) {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            if (Arrays.stream(k.getDeclaredMethods()).anyMatch(m -> m.getName().equals(member))
                    || Arrays.stream(k.getDeclaredFields()).anyMatch(f -> f.getName().equals(member))
                    || Arrays.stream(k.getDeclaredClasses()).anyMatch(n -> n.getSimpleName().equals(member))) {
                return true;
            }
        }
        return false;
    }
}
