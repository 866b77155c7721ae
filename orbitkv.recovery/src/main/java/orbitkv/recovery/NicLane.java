package orbitkv.recovery;

import java.util.Locale;
import java.util.Objects;

/**
 * One physical NIC and one direction: the unit of S6 admission (ROUTE-11). Loopback and every network-namespace
 * interface count as NICs. Receive ({@link Direction#RX}) is charged by the bytes that arrive on this node (Manager
 * READs, an engine's incoming P/D WRITEs); transmit ({@link Direction#TX}) by the bytes this node sends (source
 * egress, an engine's outgoing P/D WRITEs).
 *
 * @param nic the interface name, 1..15 characters of {@code [A-Za-z0-9_.-]} (Linux IFNAMSIZ)
 * @param direction RX or TX
 */
public record NicLane(String nic, Direction direction) {
    /** The direction of the bytes on the NIC. */
    public enum Direction {
        RX,
        TX;

        /** "rx" or "tx". */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** Parses "rx"/"tx" (any case). */
        public static Direction parse(String text) {
            return switch (Objects.requireNonNull(text, "direction").toLowerCase(Locale.ROOT)) {
                case "rx" -> RX;
                case "tx" -> TX;
                default -> throw new IllegalArgumentException("direction must be rx or tx, got '" + text + "'");
            };
        }
    }

    public NicLane {
        Objects.requireNonNull(direction, "direction");
        checkNicName(nic);
    }

    /** Throws {@link IllegalArgumentException} unless {@code nic} is a legal interface name. */
    public static String checkNicName(String nic) {
        if (nic == null || nic.isEmpty() || nic.length() > 15 || !nic.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("NIC name must be 1..15 characters of [A-Za-z0-9_.-], got '" + nic + "'");
        }
        return nic;
    }

    @Override
    public String toString() {
        return nic + "/" + direction.wireName();
    }
}
