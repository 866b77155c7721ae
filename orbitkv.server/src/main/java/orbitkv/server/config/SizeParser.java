package orbitkv.server.config;

import java.util.Locale;

/** {@code SIZE} values: a non-negative integer of bytes, or with a {@code KiB}, {@code MiB} or {@code GiB} suffix. */
final class SizeParser {
    private SizeParser() {}

    static long parse(Setting setting, String text) {
        String t = text.strip();
        long unit = 1;
        String digits = t;
        String lower = t.toLowerCase(Locale.ROOT);
        if (lower.endsWith("kib")) {
            unit = 1L << 10;
        } else if (lower.endsWith("mib")) {
            unit = 1L << 20;
        } else if (lower.endsWith("gib")) {
            unit = 1L << 30;
        }
        if (unit != 1) {
            digits = t.substring(0, t.length() - 3);
        }
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9') || digits.length() > 18) {
            throw new ConfigException(setting.flag() + " must be a size in bytes with an optional KiB, MiB or GiB suffix, got '"
                    + text + "'");
        }
        try {
            return Math.multiplyExact(Long.parseLong(digits), unit);
        } catch (ArithmeticException e) {
            throw new ConfigException(setting.flag() + " is too large: '" + text + "'");
        }
    }
}
