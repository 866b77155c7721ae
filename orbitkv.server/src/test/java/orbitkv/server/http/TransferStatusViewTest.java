package orbitkv.server.http;

import orbitkv.server.incarnation.IncarnationStatus;
import orbitkv.server.incarnation.TransferStatusView;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBufUtil;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import orbitkv.transfer.GrantEnd;
import orbitkv.transfer.TransferSourceStatus;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The transfer section of the status JSON, mapped from the transfer source's snapshot and written as the API writes it. */
@Tag("unit")
class TransferStatusViewTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    @DisplayName("INV-9 DIAG-1 status JSON transfer.source.sends_cut lists every grant end with its count of cut sends")
    void sendsCutInStatusJson() throws IOException {
        Map<GrantEnd, Long> sendsCut = Map.of(GrantEnd.EXPIRED, 1L, GrantEnd.EXCLUDED, 2L, GrantEnd.FENCED, 4L);
        // grants_ended carries other counts for the same causes: a view that maps it into sends_cut fails
        TransferSourceStatus s = new TransferSourceStatus(0, 0, 0, 0, 30, Map.of(GrantEnd.EXPIRED, 7L, GrantEnd.RELEASED, 9L),
                Map.of(), Map.of(), Map.of(), Map.of(), 0, 0, sendsCut, Map.of(), Map.of(), Map.of(), 0);
        IncarnationStatus.TransferStatus transfer = new IncarnationStatus.TransferStatus(TransferStatusView.source(s, "127.0.0.1:7001", 1024),
                null);
        ApiResponse r = CacheApi.json(200, new IncarnationStatus.StatusResponse(null, null, null, null, null, null, null, List.of(),
                null, null, transfer));
        JsonNode status = JSON.readTree(ByteBufUtil.getBytes(r.body()));
        r.body().release();

        JsonNode cut = status.at("/transfer/source/sends_cut");
        assertThat(cut.isObject()).as("transfer.source.sends_cut in %s", status).isTrue();
        Map<String, Long> expected = new LinkedHashMap<>();
        for (GrantEnd end : GrantEnd.values()) {
            expected.put(end.name().toLowerCase(Locale.ROOT), sendsCut.getOrDefault(end, 0L));
        }
        Map<String, Long> actual = new LinkedHashMap<>();
        cut.properties().forEach(e -> actual.put(e.getKey(), e.getValue().asLong()));
        assertThat(actual).as("sends cut by cause, every cause listed").isEqualTo(expected);
        assertThat(status.at("/transfer/source/grants_ended/expired").asLong()).isEqualTo(7);
    }
}
