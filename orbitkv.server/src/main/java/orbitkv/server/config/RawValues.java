package orbitkv.server.config;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Raw setting values from flags and the config file, before parsing. {@link #overlay} implements
 * "flags win": a setting given as a flag replaces the file's value entirely (a repeated option too).
 */
public final class RawValues {
    private final Map<Setting, List<String>> values = new EnumMap<>(Setting.class);

    /** Sets {@code setting} to {@code raw} (one value, or several for a repeatable one). */
    public RawValues put(Setting setting, List<String> raw) {
        if (raw.isEmpty()) {
            throw new IllegalArgumentException(setting.flag() + " needs a value");
        }
        if (setting.kind() != Setting.Kind.TEXT_LIST && raw.size() > 1) {
            throw new ConfigException(setting.flag() + " is given " + raw.size() + " times; it takes one value");
        }
        values.put(setting, List.copyOf(raw));
        return this;
    }

    public RawValues put(Setting setting, String raw) {
        return put(setting, List.of(raw));
    }

    public boolean given(Setting setting) {
        return values.containsKey(setting);
    }

    /** A new set: this one with every setting of {@code winner} replacing ours. */
    public RawValues overlay(RawValues winner) {
        RawValues merged = new RawValues();
        merged.values.putAll(values);
        merged.values.putAll(winner.values);
        return merged;
    }

    /** The single value or the default; null if neither exists. */
    String text(Setting s) {
        List<String> v = values.get(s);
        return v != null ? v.getFirst() : s.defaultValue();
    }

    List<String> list(Setting s) {
        return values.getOrDefault(s, List.of());
    }

    boolean flag(Setting s) {
        String t = text(s).strip().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new ConfigException(s.flag() + " must be true or false, got '" + text(s) + "'");
        };
    }

    long size(Setting s, long min) {
        String t = text(s);
        long v = SizeParser.parse(s, t);
        if (v < min) {
            throw new ConfigException(s.flag() + " must be at least " + min + " bytes, got '" + t + "'");
        }
        return v;
    }

    long ms(Setting s, long min, long max) {
        return integer(s, min, max, " ms");
    }

    int count(Setting s) {
        return count(s, 1, Integer.MAX_VALUE);
    }

    /** A count within {@code min..max} (the message says "a count", never a unit it does not have). */
    int count(Setting s, int min, int max) {
        return (int) integer(s, min, max, "");
    }

    private long integer(Setting s, long min, long max, String unit) {
        String t = text(s).strip();
        long v;
        try {
            v = Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new ConfigException(s.flag() + " must be an integer, got '" + text(s) + "'");
        }
        if (v < min || v > max) {
            throw new ConfigException(s.flag() + " must be " + min + ".." + max + unit + ", got " + v);
        }
        return v;
    }
}
