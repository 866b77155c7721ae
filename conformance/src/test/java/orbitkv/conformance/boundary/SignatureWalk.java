package orbitkv.conformance.boundary;

import java.lang.annotation.Annotation;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Walks the public signature of the exported types of one module (DESIGN §2): supertypes, type parameters
 * and their bounds, public and protected fields, methods and constructors (parameters, returns, thrown
 * types), record components, permitted subclasses, runtime-visible annotations, and public or protected
 * member types. Every type named there must be readable by any module that reads this one: declared in an
 * exported package of the module itself, exported by a module in its implied readability (the modules it
 * {@code requires transitive}, and theirs, recursively), or in java.base. Anything else is a leak, reported
 * as {@code declaring type -> named type (its module)}.
 */
final class SignatureWalk {
    private final Module module;
    private final Set<Module> readable = new HashSet<>();
    private final Set<String> leaks = new TreeSet<>();
    private final Set<Class<?>> walked = new HashSet<>();

    SignatureWalk(Module module) {
        this.module = module;
        Deque<Module> todo = new ArrayDeque<>(List.of(module));
        while (!todo.isEmpty()) {
            Module m = todo.pop();
            if (!readable.add(m) || m.getDescriptor() == null) {
                continue;
            }
            for (ModuleDescriptor.Requires r : m.getDescriptor().requires()) {
                if (r.modifiers().contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE)) {
                    m.getLayer().findModule(r.name()).ifPresent(todo::push);
                }
            }
        }
    }

    /** True if {@code c} is part of an API: public, and every enclosing type public or protected. */
    static boolean visible(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
            int mod = k.getModifiers();
            boolean outer = k.getDeclaringClass() == null;
            if (outer ? !Modifier.isPublic(mod) : !(Modifier.isPublic(mod) || Modifier.isProtected(mod))) {
                return false;
            }
        }
        return !c.isSynthetic() && !c.isAnonymousClass() && !c.isLocalClass();
    }

    private static boolean api(Member m) {
        return (Modifier.isPublic(m.getModifiers()) || Modifier.isProtected(m.getModifiers())) && !m.isSynthetic();
    }

    List<String> leaks() {
        return List.copyOf(leaks);
    }

    /** Walks one exported type's signature. */
    void type(Class<?> c) {
        if (!walked.add(c)) {
            return;
        }
        annotations(c, c);
        named(c, c.getGenericSuperclass());
        for (Type t : c.getGenericInterfaces()) {
            named(c, t);
        }
        for (TypeVariable<?> v : c.getTypeParameters()) {
            bounds(c, v);
        }
        if (c.isSealed()) {
            for (Class<?> p : c.getPermittedSubclasses()) {
                named(c, p);
            }
        }
        if (c.isRecord()) {
            for (RecordComponent rc : c.getRecordComponents()) {
                named(c, rc.getGenericType());
            }
        }
        for (Field f : c.getDeclaredFields()) {
            if (api(f)) {
                annotations(c, f);
                named(c, f.getGenericType());
            }
        }
        for (Constructor<?> k : c.getDeclaredConstructors()) {
            if (api(k)) {
                executable(c, k);
            }
        }
        for (Method m : c.getDeclaredMethods()) {
            if (api(m) && !m.isBridge()) {
                executable(c, m);
                named(c, m.getGenericReturnType());
            }
        }
        for (Class<?> nested : c.getDeclaredClasses()) {
            if (visible(nested)) {
                type(nested);
            }
        }
    }

    private void executable(Class<?> owner, Executable e) {
        annotations(owner, e);
        for (TypeVariable<?> v : e.getTypeParameters()) {
            bounds(owner, v);
        }
        for (Type p : e.getGenericParameterTypes()) {
            named(owner, p);
        }
        for (Type t : e.getGenericExceptionTypes()) {
            named(owner, t);
        }
    }

    private void annotations(Class<?> owner, AnnotatedElement e) {
        for (Annotation a : e.getDeclaredAnnotations()) { // runtime-visible only: the others are not in the API
            Retention r = a.annotationType().getAnnotation(Retention.class);
            if (r != null && r.value() == RetentionPolicy.RUNTIME) {
                named(owner, a.annotationType());
            }
        }
    }

    private void bounds(Class<?> owner, TypeVariable<?> v) {
        for (Type b : v.getBounds()) {
            named(owner, b);
        }
    }

    private void named(Class<?> owner, Type t) {
        switch (t) {
            case null -> { }
            case Class<?> c when c.isArray() -> named(owner, c.getComponentType());
            case Class<?> c when c.isPrimitive() -> { }
            case Class<?> c -> check(owner, c);
            case ParameterizedType p -> {
                named(owner, p.getRawType());
                named(owner, p.getOwnerType());
                for (Type a : p.getActualTypeArguments()) {
                    named(owner, a);
                }
            }
            case GenericArrayType g -> named(owner, g.getGenericComponentType());
            case WildcardType w -> {
                for (Type b : w.getUpperBounds()) {
                    named(owner, b);
                }
                for (Type b : w.getLowerBounds()) {
                    named(owner, b);
                }
            }
            case TypeVariable<?> v -> { } // declared on a type or method of this signature: its bounds are walked there
            default -> leaks.add(owner.getName() + " -> " + t + " (unknown kind of type)");
        }
    }

    private void check(Class<?> owner, Class<?> named) {
        Module m = named.getModule();
        String pkg = named.getPackageName();
        boolean ok;
        if (m == module) {
            ok = visible(named) && module.getDescriptor().exports().stream()
                    .anyMatch(e -> !e.isQualified() && e.source().equals(pkg));
        } else if (m.isNamed() && m.getName().equals("java.base")) {
            ok = m.isExported(pkg);
        } else {
            ok = m.isNamed() && readable.contains(m) && m.isExported(pkg);
        }
        if (!ok) {
            leaks.add(owner.getName() + " -> " + named.getName() + " ("
                    + (m.isNamed() ? "module " + m.getName() : "the class path") + ")");
        }
    }
}
