package orbitkv.conformance.kit;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;

/**
 * A Manager's {@link TargetStatus} and {@link TargetBlocks} through HTTP API v1 (docs/api.md): every read is one
 * {@code GET /cache/metadata/status} (or {@code /cache/query}, {@code /metrics}), as the kit always read it.
 */
final class HttpTargetStatus implements TargetStatus, TargetBlocks {
    private final TargetApi api;

    HttpTargetStatus(TargetApi api) {
        this.api = api;
    }

    @Override
    public Incarnation incarnation() {
        return Incarnation.parse(api.status().at("/self/incarnation").asText());
    }

    @Override
    public long headSequence() {
        return api.status().at("/inventory/head_sequence").asLong();
    }

    @Override
    public long membershipRevision() {
        return api.status().at("/membership/revision").asLong();
    }

    @Override
    public boolean membershipValid() {
        return api.status().at("/membership/valid").asBoolean();
    }

    @Override
    public String lease() {
        return api.status().at("/membership/lease").asText();
    }

    @Override
    public boolean healEnabled() {
        return api.status().at("/membership/heal/enabled").asBoolean(false);
    }

    @Override
    public List<ServedSession> served() {
        List<ServedSession> out = new ArrayList<>();
        for (JsonNode st : api.status().at("/sessions/served")) {
            out.add(new ServedSession(st.path("session_id").asText(), st.path("requester").toString(), st.path("phase").asText(),
                    st.path("cursor").asLong(), st.path("outstanding_bytes").asLong()));
        }
        return out;
    }

    @Override
    public Optional<InstalledView> installed(Incarnation owner) {
        for (JsonNode o : api.status().path("owners")) {
            if (owner.toString().equals(o.at("/owner/incarnation").asText())) { // view_id is null without an installed view
                return o.path("view_id").isTextual() ? Optional.of(new InstalledView(o.path("view_id").asText(),
                        o.path("watermark").asLong())) : Optional.empty();
            }
        }
        return Optional.empty();
    }

    @Override
    public Map<String, String> replicas(Incarnation owner, Namespace ns, List<StateKey> keys) {
        List<String> hex = keys.stream().map(k -> HexFormat.of().formatHex(k.key())).toList();
        JsonNode q = api.query(new String(ns.bytes(), StandardCharsets.UTF_8), hex);
        Map<String, String> out = new HashMap<>();
        for (JsonNode c : q.path("candidates")) {
            for (JsonNode rep : c.path("replicas")) {
                if (owner.toString().equals(rep.at("/owner/incarnation").asText())) {
                    out.put(c.path("key").asText() + "/" + rep.path("medium").asText(),
                            rep.path("sequence").asLong() + "/" + rep.path("size").asLong());
                }
            }
        }
        return out;
    }

    @Override
    public OptionalDouble counter(String family, Map<String, String> labels) {
        return api.sample(family, labels);
    }

    @Override
    public int save(String namespace, Map<String, byte[]> blocks) {
        return api.save(namespace, blocks).get("saved").size();
    }

    @Override
    public void evict(String namespace, List<String> keys) {
        api.evict(namespace, keys);
    }
}
