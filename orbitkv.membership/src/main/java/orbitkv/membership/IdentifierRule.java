package orbitkv.membership;

/**
 * The one rule for names that become etcd key segments (cluster name, node id): 1 to 64 characters
 * from {@code [A-Za-z0-9._-]}, not {@code "."} or {@code ".."}, so that a name can never escape or
 * alias a key under {@code /orbitkv/v2/<cluster>/} (MEM-1).
 */
final class IdentifierRule {
    static final int MAX_LENGTH = 64;

    private IdentifierRule() {}

    static String require(String field, String value) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        if (value.isEmpty() || value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(
                    field + " must be 1.." + MAX_LENGTH + " characters, got " + value.length());
        }
        if (value.equals(".") || value.equals("..")) {
            throw new IllegalArgumentException(field + " must not be '" + value + "'");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            if (!ok) {
                throw new IllegalArgumentException(
                        field + " may contain only [A-Za-z0-9._-], found '" + c + "' at index " + i);
            }
        }
        return value;
    }
}
