package orbitkv.transfer.source;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Objects;
import orbitkv.transfer.EgressAccount;

/**
 * The NIC a source's data listener sends on and the node-wide account of that NIC's egress (issue 39 item 2;
 * ROUTE-11): the interface that holds the listener's bound address (loopback counts), resolved once at start.
 *
 * @param nic the interface name, or {@value #UNKNOWN} when no interface has the address
 * @param account where each send is charged
 */
record NicEgress(String nic, EgressAccount account) {
    static final String UNKNOWN = "unknown";
    /** No node-wide account (the source's own window only). */
    static final NicEgress NONE = new NicEgress(UNKNOWN, EgressAccount.NONE);

    NicEgress {
        Objects.requireNonNull(nic, "nic");
        Objects.requireNonNull(account, "account");
    }

    /** The NIC of {@code address} (a specific, local address) with {@code account}. */
    static NicEgress of(InetAddress address, EgressAccount account) {
        return new NicEgress(nicOf(address), account);
    }

    /** The name of the interface holding {@code address}, or {@value #UNKNOWN}. */
    static String nicOf(InetAddress address) {
        try {
            NetworkInterface n = address == null ? null : NetworkInterface.getByInetAddress(address);
            return n == null ? UNKNOWN : n.getName();
        } catch (SocketException e) {
            return UNKNOWN;
        }
    }

    /** Charges one send's bytes on this NIC. */
    EgressAccount.Charge charge(long bytes) {
        return Objects.requireNonNull(account.charge(nic, bytes), "an egress account answered null");
    }
}
