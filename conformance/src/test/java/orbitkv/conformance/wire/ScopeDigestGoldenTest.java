package orbitkv.conformance.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import orbitkv.conformance.docs.MarkdownTable;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SES-7, SES-8: pins the scope-digest encoding to the golden vectors in docs/protocol.md, which were
 * computed by an independent implementation of the documented encoding.
 */
@Tag("unit")
class ScopeDigestGoldenTest {
    private static final HexFormat HEX = HexFormat.of();

    static Stream<Arguments> vectors() {
        return MarkdownTable.rows(MarkdownTable.root().resolve("docs/protocol.md"), "golden:scope-digest")
                .stream().map(r -> Arguments.of(r.get(0), r.get(1), r.get(2), r.get(3)));
    }

    @ParameterizedTest(name = "SES-7 golden vector: {0}")
    @MethodSource("vectors")
    void digestMatchesGoldenVector(String name, String input, String encodingHex, String sha256Hex) {
        Scope scope = parse(input);
        assertThat(HEX.formatHex(scope.canonicalEncoding())).as("canonical encoding of %s", name).isEqualTo(encodingHex);
        assertThat(scope.digest().hex()).as("digest of %s", name).isEqualTo(sha256Hex);
    }

    @Test
    @DisplayName("SES-7 docs/protocol.md holds at least the five required golden vectors")
    void requiredCasesPresent() {
        List<String> inputs = vectors().map(a -> (String) a.get()[1]).toList();
        assertThat(inputs).contains("all", "list:");
        assertThat(inputs).anySatisfy(i -> assertThat(i).startsWith("list:").doesNotContain(","));
        assertThat(inputs).anySatisfy(i -> assertThat(i.split(",")).hasSizeGreaterThan(2));
        assertThat(inputs).contains("list:ff00c328");
        assertThat(inputs).hasSizeGreaterThanOrEqualTo(5);
    }

    @Test
    @DisplayName("SES-8 the empty list and AllNamespaces never share a digest")
    void emptyIsNotAll() {
        assertThat(Scope.none().digest()).isNotEqualTo(Scope.all().digest());
    }

    private static Scope parse(String input) {
        if (input.equals("all")) {
            return Scope.all();
        }
        if (!input.startsWith("list:")) {
            throw new IllegalArgumentException("golden vector input must be 'all' or 'list:...', got " + input);
        }
        List<Namespace> given = new ArrayList<>();
        for (String hex : MarkdownTable.list(input.substring("list:".length()))) {
            given.add(new Namespace(HEX.parseHex(hex)));
        }
        return Scope.of(given);
    }
}
