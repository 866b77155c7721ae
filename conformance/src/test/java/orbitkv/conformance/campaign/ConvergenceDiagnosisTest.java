package orbitkv.conformance.campaign;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The CONVERGENCE failure line (campaign regression row 2) read from a status answer of the shape
 * {@code GET /cache/metadata/status} returns: the owner whose receipt age is past the freshness budget is named,
 * with its requester session's state, connects and last error, so a failure that does not replay is explainable.
 */
@Tag("unit")
class ConvergenceDiagnosisTest {
    private static final String STATUS = """
            {"self": {"node_id": "b", "node_epoch": 3, "incarnation": "b:3:1111"},
             "membership": {"valid": true, "lease": "healthy", "failed_renewals": 0},
             "coverage": "PartialHints",
             "owners": [
               {"owner": {"incarnation": "a:1:aaaa"}, "state": "INSTALLED", "watermark": 40, "source_head": 40,
                "receipt_age_ms": 61234, "last_reset_cause": null},
               {"owner": {"incarnation": "c:2:cccc"}, "state": "INSTALLED", "watermark": 17, "source_head": 17,
                "receipt_age_ms": 120, "last_reset_cause": "DISCONNECT"}],
             "sessions": {
               "requester": [
                 {"source": {"incarnation": "a:1:aaaa"}, "state": "STREAMING", "connects": 9, "installs": 1,
                  "last_error_cause": "TRANSPORT_UNAVAILABLE"},
                 {"source": {"incarnation": "c:2:cccc"}, "state": "STREAMING", "connects": 4, "installs": 1,
                  "last_error_cause": ""}],
               "served": [
                 {"requester": {"incarnation": "a:1:aaaa"}, "phase": "STREAMING", "cursor": 33, "last_frame": 80,
                  "outstanding_bytes": 0}]}}
            """;

    @Test
    @DisplayName("IDX-12 DIAG-1 the failure line names the owner past the freshness budget and its session's state, connects and last error")
    void namesTheStaleOwnerAndItsSession() throws Exception {
        JsonNode st = new ObjectMapper().readTree(STATUS);
        String line = ConvergenceDiagnosis.node("b", st);
        assertThat(line).startsWith("b{self=b:3:1111 valid=true coverage=PartialHints lease=healthy/failed=0 heal=-");
        assertThat(line).contains("stale_owners=[a:1:aaaa(61234ms)]");
        assertThat(line).contains("a:1:aaaa:INSTALLED wm=40 head=40 age=61234ms reset=-");
        assertThat(line).contains("a:1:aaaa:STREAMING connects=9 installs=1 err=TRANSPORT_UNAVAILABLE");
        assertThat(line).contains("served=[a:1:aaaa:STREAMING cursor=33 last_frame=80 out=0; ]");
        assertThat(line).doesNotContain("c:2:cccc(");
    }
}
