package orbitkv.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * Seeded property tries for JUnit 5 (the project's replacement for jqwik; shared by every module's tests through the
 * test-scope artifact {@code orbitkv.testing}). A property runs {@code tries} tries; try {@code i} draws its input from its
 * own seed (derived from the property's base seed), prints nothing while it passes, and on failure reports
 * the try, its seed and the input it drew. {@code -Dorbitkv.seed=S} replays exactly one try from seed
 * {@code S} in every property of the run. A fixed base seed keeps the default run deterministic; a property
 * without one draws a base seed per run and prints it.
 */
public final class SeededTries {
    /** The one system property that replays a try: {@code -Dorbitkv.seed=S}. */
    public static final String SEED_PROPERTY = "orbitkv.seed";

    private SeededTries() {}

    /** The property: checks one drawn input (by assertions or exceptions). */
    @FunctionalInterface
    public interface Check<T> {
        void check(T input) throws Exception;
    }

    /** Runs {@code tries} tries of {@code check} on inputs drawn by {@code draw}, from base seed {@code baseSeed}. */
    public static <T> void run(String property, int tries, long baseSeed, Function<Gen, T> draw, Check<T> check) {
        long[] seeds;
        if (replaying()) {
            seeds = new long[] {Long.parseLong(System.getProperty(SEED_PROPERTY).strip())};
            System.out.printf("%s: replaying one try from seed %d (-D%s)%n", property, seeds[0], SEED_PROPERTY);
        } else {
            SplittableRandom base = new SplittableRandom(baseSeed);
            seeds = new long[tries];
            for (int i = 0; i < tries; i++) {
                seeds[i] = base.nextLong();
            }
            System.out.printf("%s: %d tries from base seed %d%n", property, tries, baseSeed);
        }
        for (int i = 0; i < seeds.length; i++) {
            T input = null;
            try {
                input = draw.apply(new Gen(seeds[i]));
                check.check(input);
            } catch (Throwable e) {
                throw new AssertionError(property + ": try " + (i + 1) + " of " + seeds.length + " failed with seed " + seeds[i]
                        + " (replay: -D" + SEED_PROPERTY + "=" + seeds[i] + "); input: " + describe(input) + "; " + e, e);
            }
        }
    }

    /** True when {@code -Dorbitkv.seed} replays one try (distribution checks over all tries do not apply then). */
    public static boolean replaying() {
        String replay = System.getProperty(SEED_PROPERTY);
        return replay != null && !replay.isBlank();
    }

    /** A base seed for a property that had none: drawn per run, printed by {@link #run}. */
    public static long freshBaseSeed() {
        return new SplittableRandom().nextLong();
    }

    private static String describe(Object input) {
        String s = String.valueOf(input);
        return s.length() > 4000 ? s.substring(0, 4000) + "... (" + s.length() + " chars)" : s;
    }

    /** Draws values from one try's seed; bounded draws hit their edges (min, max, their neighbours) one time in eight. */
    public static final class Gen {
        private final SplittableRandom random;
        private final long seed;

        Gen(long seed) {
            this.seed = seed;
            this.random = new SplittableRandom(seed);
        }

        /** The try's own seed (for code that takes a {@code java.util.Random}). */
        public long seed() {
            return seed;
        }

        /** A long in [min, max], inclusive, edge-biased. */
        public long longIn(long min, long max) {
            if (min > max) {
                throw new IllegalArgumentException("empty range [" + min + ", " + max + "]");
            }
            if (random.nextInt(8) == 0) {
                long[] edges = {min, max, min == max ? min : min + 1, min == max ? max : max - 1};
                return edges[random.nextInt(edges.length)];
            }
            if (max < Long.MAX_VALUE) {
                return random.nextLong(min, max + 1);
            }
            return min > Long.MIN_VALUE ? random.nextLong(min - 1, max) + 1 : random.nextLong();
        }

        /** An int in [min, max], inclusive, edge-biased. */
        public int intIn(int min, int max) {
            return (int) longIn(min, max);
        }

        /** Any long, edge-biased (0, ±1, the extremes). */
        public long anyLong() {
            if (random.nextInt(8) == 0) {
                long[] edges = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE};
                return edges[random.nextInt(edges.length)];
            }
            return random.nextLong();
        }

        public boolean bool() {
            return random.nextBoolean();
        }

        /** True with probability 1/n. */
        public boolean oneIn(int n) {
            return random.nextInt(n) == 0;
        }

        /** An index drawn with the given relative weights. */
        public int weighted(int... weights) {
            int total = 0;
            for (int w : weights) {
                total += w;
            }
            int r = random.nextInt(total);
            for (int i = 0; i < weights.length; i++) {
                r -= weights[i];
                if (r < 0) {
                    return i;
                }
            }
            throw new IllegalStateException("unreachable");
        }

        @SafeVarargs
        public final <T> T oneOf(T... values) {
            return values[random.nextInt(values.length)];
        }

        public <T> T oneOf(List<T> values) {
            return values.get(random.nextInt(values.size()));
        }

        /** Random bytes, length in [minLength, maxLength]. */
        public byte[] bytes(int minLength, int maxLength) {
            byte[] b = new byte[intIn(minLength, maxLength)];
            random.nextBytes(b);
            return b;
        }

        /** A list of [minSize, maxSize] elements, each drawn by {@code element}. */
        public <T> List<T> list(int minSize, int maxSize, Function<Gen, T> element) {
            int n = intIn(minSize, maxSize);
            List<T> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(element.apply(this));
            }
            return out;
        }

        /** A list whose size is uniform in [minSize, maxSize] (no edge bias). */
        public <T> List<T> uniformList(int minSize, int maxSize, Function<Gen, T> element) {
            int n = minSize + random.nextInt(maxSize - minSize + 1);
            List<T> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(element.apply(this));
            }
            return out;
        }
    }
}
