package orbitkv.server.http;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import orbitkv.server.api.JsonRequests;

/**
 * A request target ({@code /path?name=value&...}) decoded strictly (issue 20 item 8): every {@code %XX} must
 * be two hex digits, and values stay bytes until a caller asks for text, which must then be valid UTF-8.
 * Netty's {@code QueryStringDecoder} replaces invalid UTF-8 with U+FFFD (two different byte strings would
 * become one namespace) and throws unchecked exceptions on malformed escapes (answered 500 or not at all);
 * here both are named refusals. In the query, {@code +} is a space (form encoding); in the path it is itself.
 *
 * @param path the decoded path
 * @param parameters decoded parameter values in request order, by decoded name
 */
record RequestTarget(String path, Map<String, List<byte[]>> parameters) {
    /** Parameters per request; beyond: refused (a bound on what one request line can make us allocate). */
    static final int PARAMETERS_MAX = 64;

    /** @throws ApiException MALFORMED_HTTP for the path, INVALID_QUERY_PARAMETER for the query */
    static RequestTarget parse(String uri) {
        int hash = uri.indexOf('#');
        String target = hash >= 0 ? uri.substring(0, hash) : uri;
        int q = target.indexOf('?');
        String rawPath = q >= 0 ? target.substring(0, q) : target;
        String path = JsonRequests.utf8(decode(rawPath, false, "the request path"), ApiError.MALFORMED_HTTP, "the request path");
        Map<String, List<byte[]>> params = new LinkedHashMap<>();
        if (q >= 0 && q + 1 < target.length()) {
            String[] pairs = target.substring(q + 1).split("&", -1);
            if (pairs.length > PARAMETERS_MAX) {
                throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "the query holds " + pairs.length
                        + " parameters; at most " + PARAMETERS_MAX);
            }
            for (String pair : pairs) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String rawName = eq >= 0 ? pair.substring(0, eq) : pair;
                String name = JsonRequests.utf8(decode(rawName, true, "a query parameter name"), ApiError.INVALID_QUERY_PARAMETER,
                        "a query parameter name");
                byte[] value = decode(eq >= 0 ? pair.substring(eq + 1) : "", true, "query parameter " + JsonRequests.clip(name));
                params.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
            }
        }
        return new RequestTarget(path, params);
    }

    /** The one value of {@code name} as UTF-8 text, or null if absent. */
    String text(String name) {
        byte[] v = single(name);
        return v == null ? null : JsonRequests.utf8(v, ApiError.INVALID_QUERY_PARAMETER, "query parameter " + name);
    }

    /** The one value of {@code name} as bytes, or null if absent; given twice is INVALID_QUERY_PARAMETER. */
    byte[] single(String name) {
        List<byte[]> values = parameters.get(name);
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "query parameter " + name + " is given "
                    + values.size() + " times");
        }
        return values.getFirst();
    }

    /** Percent-decoding to bytes; a {@code %} not followed by two hex digits is refused with its position. */
    private static byte[] decode(String s, boolean plusIsSpace, String what) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                int hi = i + 1 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
                int lo = i + 2 < s.length() ? Character.digit(s.charAt(i + 2), 16) : -1;
                if (hi < 0 || lo < 0) {
                    throw new ApiException(what.equals("the request path") ? ApiError.MALFORMED_HTTP
                            : ApiError.INVALID_QUERY_PARAMETER, what + " has a malformed percent-encoding at character "
                            + i + ": '" + JsonRequests.clip(s.substring(i, Math.min(s.length(), i + 3)))
                            + "' (a % must be followed by two hex digits)");
                }
                out.write((hi << 4) | lo);
                i += 2;
            } else if (c == '+' && plusIsSpace) {
                out.write(' ');
            } else if (c < 0x80) {
                out.write(c);
            } else {
                // a raw non-ASCII character in the request line (Netty decodes it as ISO-8859-1): its byte
                out.write(c & 0xFF);
            }
        }
        return out.toByteArray();
    }
}
