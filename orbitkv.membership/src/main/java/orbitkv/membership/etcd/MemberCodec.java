package orbitkv.membership.etcd;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MemberRole;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;

/**
 * The canonical, bounded member record under {@code members/<node_id>} (DESIGN §3, MEM-4): six lines
 * {@code key = value} in this fixed order, UTF-8, at most {@link #MAX_BYTES} bytes, plus, for a requester-only
 * member only, a seventh line {@code role = requester} (MEM-11). A serving member's record has exactly the six
 * lines (records written before the role existed decode unchanged, as serving). Nothing else (no block list,
 * no load) can be expressed in it.
 */
final class MemberCodec {
    static final int MAX_BYTES = 1024;
    private static final String[] FIELDS = {"node_id", "node_epoch", "incarnation", "peer", "control", "protocol"};
    /** The optional seventh line, present exactly when the member is requester-only. */
    static final String REQUESTER_LINE = "role = requester";

    private MemberCodec() {}

    static String encode(Member m) {
        String text = "node_id = " + m.nodeId().value() + "\n"
                + "node_epoch = " + m.incarnation().epoch().value() + "\n"
                + "incarnation = " + m.incarnation().id() + "\n"
                + "peer = " + m.peer() + "\n"
                + "control = " + m.control() + "\n"
                + "protocol = " + m.protocol() + "\n"
                + (m.role() == MemberRole.REQUESTER ? REQUESTER_LINE + "\n" : "");
        if (text.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new IllegalArgumentException("member record exceeds " + MAX_BYTES + " bytes");
        }
        return text;
    }

    /**
     * Decodes a canonical record.
     *
     * @throws IllegalArgumentException naming the malformed field or the size bound
     */
    static Member decode(String text) {
        if (text.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new IllegalArgumentException("member record exceeds " + MAX_BYTES + " bytes");
        }
        String[] lines = text.split("\n", -1);
        boolean requester = lines.length == FIELDS.length + 2;
        if ((lines.length != FIELDS.length + 1 && !requester) || !lines[lines.length - 1].isEmpty()) {
            throw new IllegalArgumentException("member record must have exactly " + FIELDS.length + " lines, or "
                    + (FIELDS.length + 1) + " ending with '" + REQUESTER_LINE + "'");
        }
        if (requester && !lines[FIELDS.length].equals(REQUESTER_LINE)) {
            throw new IllegalArgumentException("member record line " + (FIELDS.length + 1) + " must be '"
                    + REQUESTER_LINE + "'");
        }
        String[] values = new String[FIELDS.length];
        for (int i = 0; i < FIELDS.length; i++) {
            String head = FIELDS[i] + " = ";
            if (!lines[i].startsWith(head)) {
                throw new IllegalArgumentException("member record line " + (i + 1) + " must start with '" + head + "'");
            }
            values[i] = lines[i].substring(head.length());
        }
        long epoch;
        try {
            epoch = Long.parseLong(values[1]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("member record node_epoch is not an integer: " + values[1]);
        }
        UUID id;
        try {
            id = UUID.fromString(values[2]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("member record incarnation is not a UUID: " + values[2]);
        }
        Member m = new Member(new Incarnation(new NodeId(values[0]), new NodeEpoch(epoch), id),
                Endpoint.parse(values[3]), Endpoint.parse(values[4]), values[5],
                requester ? MemberRole.REQUESTER : MemberRole.SERVING);
        if (!encode(m).equals(text)) {
            throw new IllegalArgumentException("member record is not canonical");
        }
        return m;
    }
}
