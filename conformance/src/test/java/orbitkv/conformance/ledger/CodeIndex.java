package orbitkv.conformance.ledger;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the repository's code declares, read as source (the conformance tests see no server class: {@code
 * orbitkv.server} exports nothing): every Java type (top-level and nested) with the files that declare it, every
 * Java package, the gRPC services, rpcs and messages of the .proto files, every {@code Setting} entry, every picocli
 * option and every {@code --flag} the scripts parse. {@link DocCodeNamesTest} and {@link OptionTableDriftTest}
 * resolve documentation against it.
 */
final class CodeIndex {
    static final String SETTING_SOURCE = "orbitkv.server/src/main/java/orbitkv/server/config/Setting.java";
    /** {@code NAME("option-name", Kind.X, null | "default", "doc")}: one Setting entry. */
    static final Pattern SETTING = Pattern.compile(
            "^\\s+([A-Z][A-Z0-9_]*)\\(\"([a-z0-9-]+)\",\\s*Kind\\.([A-Z_]+),\\s*(null|\"[^\"]*\"),\\s*\"((?:[^\"\\\\]|\\\\.)*)\"\\)",
            Pattern.MULTILINE);
    private static final Pattern TYPE_DECL = Pattern.compile(
            "(?:^|[\\s;{}(])(?:class|interface|enum|record|@interface)\\s+([A-Z][A-Za-z0-9_]*)");
    private static final Pattern PROTO_DECL = Pattern.compile("^\\s*(?:message|service|enum|rpc)\\s+([A-Za-z][A-Za-z0-9_]*)",
            Pattern.MULTILINE);
    private static final Pattern PROTO_PACKAGE = Pattern.compile("^package\\s+([a-z][a-z0-9_.]*);", Pattern.MULTILINE);
    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([a-z][a-z0-9_.]*);", Pattern.MULTILINE);
    /** A hand-written main's argument parser: {@code case "--seeds" ->} or {@code "--seeds".equals(arg)}. */
    private static final Pattern MAIN_FLAG = Pattern.compile("(?:case\\s+|equals\\()\"(--[a-z0-9][a-z0-9-]*)\"|\"(--[a-z0-9][a-z0-9-]*)\"\\.equals");
    private static final Pattern QUOTED_FLAG = Pattern.compile("\"(--[a-z0-9][a-z0-9-]*)\"");
    private static final Pattern OPTION_ANNOTATION = Pattern.compile("@Option\\(\\s*names\\s*=\\s*(\\{[^}]*\\}|\"[^\"]*\")");
    /** A case label of a shell option parser ({@code --seed)}, {@code --fast|-f)}) or a quoted flag in a script. */
    private static final Pattern SCRIPT_FLAG = Pattern.compile("(?<![\\w-])(--[a-z0-9][a-z0-9-]*)");
    private static final Pattern JAVA_PACKAGE_OPTION = Pattern.compile("option\\s+java_package\\s*=\\s*\"([a-z0-9_.]+)\"");
    private static final Pattern MODULE = Pattern.compile("^(?:open\\s+)?module\\s+([a-z][a-z0-9_.]*)\\s*\\{", Pattern.MULTILINE);
    private static final Pattern ENUM_BODY = Pattern.compile("\\benum\\s+([A-Z][A-Za-z0-9_]*)[^{]*\\{([^;}]*)");
    private static final Pattern ENUM_CONSTANT = Pattern.compile("(?:^|,)\\s*(?:@\\w+\\s*)*([A-Za-z][A-Za-z0-9_]*)");
    private static final Pattern PYTHON_CLASS = Pattern.compile("^\\s*class\\s+([A-Z][A-Za-z0-9_]*)", Pattern.MULTILINE);
    private static final Set<String> SKIPPED = Set.of("target", "node_modules", "__pycache__", ".git");

    /** One Setting entry as written in Setting.java. */
    record SettingEntry(String constant, String option, String kind, String defaultValue, String doc, int line) {}

    final Path root;
    /** Simple type name → the .java files declaring it (top-level or nested). */
    final Map<String, List<Path>> types = new HashMap<>();
    /** Fully qualified top-level names ({@code orbitkv.x.Y}) and nested ones ({@code orbitkv.x.Y.Z}). */
    final Set<String> qualified = new HashSet<>();
    final Set<String> packages = new HashSet<>();
    final Set<String> protoNames = new HashSet<>();
    final Set<String> protoPackages = new HashSet<>();
    final List<Path> protoFiles = new ArrayList<>();
    /** Python classes (the engine client's types and errors) → their files. */
    final Map<String, List<Path>> pythonTypes = new HashMap<>();
    /** Module names of every module-info.java. */
    final Set<String> modules = new HashSet<>();
    /** Enum constants → the files of their enums. */
    final Map<String, List<Path>> enumConstants = new HashMap<>();
    final List<SettingEntry> settings = new ArrayList<>();
    /** Every {@code --flag} a Manager setting, a picocli command or a script of this repository accepts. */
    final Set<String> flags = new TreeSet<>(List.of("--help", "--version"));
    private final Map<Path, String> texts = new HashMap<>();
    private final Map<Path, String> codes = new HashMap<>();

    CodeIndex(Path root) {
        this.root = root;
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(Files::isRegularFile).filter(p -> !skipped(root.relativize(p))).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (Path p : files) {
            String name = p.getFileName().toString();
            if (name.endsWith(".java")) {
                indexJava(p);
            } else if (name.endsWith(".proto")) {
                Matcher m = PROTO_DECL.matcher(read(p));
                while (m.find()) {
                    protoNames.add(m.group(1));
                }
                Matcher pkg = PROTO_PACKAGE.matcher(read(p));
                if (pkg.find()) {
                    protoPackages.add(pkg.group(1));
                }
                Matcher javaPackage = JAVA_PACKAGE_OPTION.matcher(read(p));
                if (javaPackage.find()) {
                    packages.add(javaPackage.group(1)); // the generated code's package
                }
                protoFiles.add(p);
            } else if (name.endsWith(".py")) {
                Matcher m = PYTHON_CLASS.matcher(read(p));
                String module = pythonPackage(root.relativize(p));
                if (module != null) {
                    packages.add(module); // clients/python/orbitkv/lmcache/x.py -> orbitkv.lmcache
                }
                while (m.find()) {
                    pythonTypes.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(p);
                    if (module != null) {
                        qualified.add(module + "." + m.group(1));
                    }
                }
            } else if (root.relativize(p).startsWith("scripts") || root.relativize(p).startsWith(".ci")
                    || name.equals("orbitkv")) {
                Matcher m = SCRIPT_FLAG.matcher(read(p));
                while (m.find()) {
                    flags.add(m.group(1));
                }
            }
        }
        readSettings();
    }

    /** The Python package of a client source file ({@code clients/python/orbitkv/...}), or null. */
    private static String pythonPackage(Path relative) {
        Path base = Path.of("clients", "python");
        if (!relative.startsWith(base) || relative.getNameCount() < 4) {
            return null;
        }
        Path dir = base.relativize(relative).getParent();
        return dir == null ? null : dir.toString().replace('/', '.');
    }

    private static boolean skipped(Path relative) {
        for (Path part : relative) {
            String n = part.toString();
            if (SKIPPED.contains(n) || (n.startsWith(".") && !n.equals(".ci"))) {
                return true;
            }
        }
        return false;
    }

    private void indexJava(Path p) {
        String text = read(p);
        String top = p.getFileName().toString().replace(".java", "");
        if (top.equals("module-info")) {
            Matcher module = MODULE.matcher(stripComments(text));
            if (module.find()) {
                modules.add(module.group(1));
            }
            return;
        }
        types.computeIfAbsent(top, k -> new ArrayList<>()).add(p);
        Matcher pkg = PACKAGE.matcher(text);
        String pkgName = pkg.find() ? pkg.group(1) : "";
        if (!pkgName.isEmpty()) {
            packages.add(pkgName);
            qualified.add(pkgName + "." + top);
        }
        Matcher e = ENUM_BODY.matcher(stripComments(text));
        while (e.find()) {
            Matcher c = ENUM_CONSTANT.matcher(e.group(2));
            while (c.find()) {
                enumConstants.computeIfAbsent(c.group(1), k -> new ArrayList<>()).add(p);
            }
        }
        Matcher m = TYPE_DECL.matcher(stripComments(text));
        while (m.find()) {
            String t = m.group(1);
            if (!t.equals(top)) {
                types.computeIfAbsent(t, k -> new ArrayList<>()).add(p);
                qualified.add(pkgName + "." + top + "." + t);
            }
        }
        Matcher mainFlag = MAIN_FLAG.matcher(text);
        while (mainFlag.find()) {
            flags.add(mainFlag.group(1) != null ? mainFlag.group(1) : mainFlag.group(2));
        }
        if (p.toString().contains("/src/main/java/") && text.contains("@Option")) {
            Matcher o = OPTION_ANNOTATION.matcher(text);
            while (o.find()) {
                int end = text.indexOf(")\n", o.start());
                boolean negatable = text.substring(o.start(), end < 0 ? text.length() : end).contains("negatable = true");
                Matcher f = QUOTED_FLAG.matcher(o.group(1));
                while (f.find()) {
                    flags.add(f.group(1));
                    if (negatable) {
                        flags.add("--no-" + f.group(1).substring(2)); // picocli's negated form
                    }
                }
            }
        }
    }

    private void readSettings() {
        String text = read(root.resolve(SETTING_SOURCE));
        Matcher s = SETTING.matcher(text);
        while (s.find()) {
            String def = s.group(4).equals("null") ? null : s.group(4).substring(1, s.group(4).length() - 1);
            settings.add(new SettingEntry(s.group(1), s.group(2), s.group(3), def, s.group(5),
                    lineOf(text, s.start(1))));
            flags.add("--" + s.group(2));
        }
        long declared = text.lines().filter(l -> l.matches("\\s+[A-Z][A-Z0-9_]*\\(\".*")).count();
        if (settings.size() < 50 || settings.size() != declared) {
            throw new IllegalStateException("read " + settings.size() + " of " + declared + " Setting entries from "
                    + SETTING_SOURCE + ": has its entry format changed?");
        }
    }

    /** The settings by option name, in source order. */
    Map<String, SettingEntry> settingsByOption() {
        Map<String, SettingEntry> m = new LinkedHashMap<>();
        settings.forEach(s -> m.put(s.option(), s));
        return m;
    }

    /** The text of a file this index read (or reads now). */
    String text(Path p) {
        return texts.computeIfAbsent(p, CodeIndex::read);
    }

    /**
     * Whether {@code member} occurs as an identifier in the code (comments and string literals removed) of a file
     * declaring {@code type}: its method, field, constant, record component or enum constant, or a use of one there.
     */
    boolean declaresMember(String type, String member) {
        Pattern identifier = Pattern.compile("(?<![\\w$])" + Pattern.quote(member) + "(?![\\w$])");
        for (Path p : types.getOrDefault(type, List.of())) {
            if (identifier.matcher(code(p)).find()) {
                return true;
            }
        }
        List<Path> other = new ArrayList<>(pythonTypes.getOrDefault(type, List.of()));
        if (protoNames.contains(type)) {
            other.addAll(protoFiles);
        }
        for (Path p : other) {
            if (identifier.matcher(text(p)).find()) {
                return true;
            }
        }
        return false;
    }

    private String code(Path p) {
        return codes.computeIfAbsent(p, f -> stripComments(text(f)).replaceAll("\"(?:[^\"\\\\\\n]|\\\\.)*\"", "\"\""));
    }

    static String stripComments(String java) {
        return java.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("//[^\\n]*", " ");
    }

    static int lineOf(String text, int offset) {
        int line = 1;
        for (int i = 0; i < offset && i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
