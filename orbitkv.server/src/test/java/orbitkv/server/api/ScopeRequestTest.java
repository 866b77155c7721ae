package orbitkv.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** IDX-4 IDX-6 SES-8: the body of POST /cache/scope; every refusal is named before any state changes. */
@Tag("unit")
class ScopeRequestTest {
    private static JsonRequests.ScopeRequest parse(String body) {
        return JsonRequests.scope(body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    @DisplayName("IDX-6 SES-8 \"all\", a canonical list, and [] as the empty scope (never all); timeout_ms defaults to 60000")
    void accepted() {
        assertThat(parse("{\"namespaces\":\"all\"}")).isEqualTo(new JsonRequests.ScopeRequest(Scope.all(), 60_000));
        assertThat(parse("{\"namespaces\":[\"b\",\"a\"],\"timeout_ms\":5}"))
                .isEqualTo(new JsonRequests.ScopeRequest(Scope.of(List.of(Namespace.utf8("a"), Namespace.utf8("b"))), 5));
        assertThat(parse("{\"namespaces\":[]}").scope()).isEqualTo(Scope.none()).isNotEqualTo(Scope.all());
    }

    static Stream<Arguments> refused() {
        String many = IntStream.range(0, 257).mapToObj(i -> "\"n" + i + "\"").collect(Collectors.joining(","));
        String big = "x".repeat(255);
        String large = IntStream.range(0, 256).mapToObj(i -> "\"" + String.format("%03d", i) + big.substring(3) + "\"")
                .collect(Collectors.joining(","));
        return Stream.of(
                Arguments.of("{}", ApiError.MISSING_FIELD, "namespaces"),
                Arguments.of("{\"namespaces\":null}", ApiError.MISSING_FIELD, "namespaces"),
                Arguments.of("{\"namespaces\":\"some\"}", ApiError.INVALID_FIELD_VALUE, "namespaces"),
                Arguments.of("{\"namespaces\":7}", ApiError.INVALID_FIELD_TYPE, "namespaces"),
                Arguments.of("{\"namespaces\":[1]}", ApiError.INVALID_FIELD_TYPE, "namespaces[0]"),
                Arguments.of("{\"namespaces\":[\"\"]}", ApiError.INVALID_NAMESPACE, "namespaces[0]"),
                Arguments.of("{\"namespaces\":[\"" + "y".repeat(256) + "\"]}", ApiError.INVALID_NAMESPACE, "namespaces[0]"),
                Arguments.of("{\"namespaces\":[\"a\",\"b\",\"a\"]}", ApiError.INVALID_FIELD_VALUE, "namespaces[2] repeats namespaces[0]"),
                Arguments.of("{\"namespaces\":[" + many + "]}", ApiError.INVALID_FIELD_VALUE, "at most 256"),
                Arguments.of("{\"namespaces\":[" + large + "]}", ApiError.INVALID_FIELD_VALUE, "65536 bytes"),
                Arguments.of("{\"namespaces\":\"all\",\"timeout_ms\":0}", ApiError.INVALID_FIELD_VALUE, "timeout_ms"),
                Arguments.of("{\"namespaces\":\"all\",\"timeout_ms\":600001}", ApiError.INVALID_FIELD_VALUE, "timeout_ms"),
                Arguments.of("{\"namespaces\":\"all\",\"timeout_ms\":\"5\"}", ApiError.INVALID_FIELD_TYPE, "timeout_ms"),
                Arguments.of("[\"all\"]", ApiError.MALFORMED_JSON, ""),
                Arguments.of("{\"namespaces\":\"all\"", ApiError.MALFORMED_JSON, ""));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource
    @DisplayName("IDX-6 a bad body is a named 400 naming the field")
    void refused(String body, ApiError code, String names) {
        assertThatThrownBy(() -> parse(body)).isInstanceOfSatisfying(ApiException.class, e -> {
            assertThat(e.error()).isEqualTo(code);
            assertThat(e.error().status()).isEqualTo(400);
            assertThat(e.getMessage()).contains(names);
        });
    }
}
