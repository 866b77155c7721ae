package orbitkv.membership;

import java.util.Objects;
import java.util.UUID;

/**
 * One running process registration: {@code (node_id, node_epoch, random 128-bit id)} (DESIGN §3).
 * Every residency generation is {@code (incarnation, StateKey, medium, residency_sequence)} (INV-3);
 * a healed or restarted process is a new incarnation with a new journal lineage (INV-7).
 *
 * @param nodeId the node
 * @param epoch the node epoch issued to this registration
 * @param id the random id of this registration
 */
public record Incarnation(NodeId nodeId, NodeEpoch epoch, UUID id) {
    public Incarnation {
        Objects.requireNonNull(nodeId, "incarnation node id must not be null");
        Objects.requireNonNull(epoch, "incarnation epoch must not be null");
        Objects.requireNonNull(id, "incarnation id must not be null");
    }

    /** A fresh incarnation of {@code nodeId} at {@code epoch} with a random id. */
    public static Incarnation random(NodeId nodeId, NodeEpoch epoch) {
        return new Incarnation(nodeId, epoch, UUID.randomUUID());
    }

    /** {@code node/epoch/uuid}, the form used in logs, the HTTP API and {@link #parse}. */
    @Override
    public String toString() {
        return nodeId.value() + "/" + epoch.value() + "/" + id;
    }

    /**
     * Parses the {@link #toString()} form.
     *
     * @throws IllegalArgumentException naming the part that is malformed
     */
    public static Incarnation parse(String text) {
        Objects.requireNonNull(text, "incarnation text must not be null");
        String[] parts = text.split("/", -1);
        if (parts.length != 3) {
            throw new IllegalArgumentException(
                    "incarnation must be 'node/epoch/uuid', got " + parts.length + " parts");
        }
        long epoch;
        try {
            epoch = Long.parseLong(parts[1]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("incarnation epoch is not a 64-bit integer: " + parts[1]);
        }
        UUID id;
        try {
            id = UUID.fromString(parts[2]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("incarnation id is not a UUID: " + parts[2]);
        }
        return new Incarnation(new NodeId(parts[0]), new NodeEpoch(epoch), id);
    }
}
