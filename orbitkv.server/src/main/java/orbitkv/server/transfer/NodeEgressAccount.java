package orbitkv.server.transfer;

import java.util.Objects;
import orbitkv.server.admission.NodeAdmissionService;
import orbitkv.transfer.EgressAccount;

/**
 * The transfer source's egress account in a Manager (issue 39 item 2; ROUTE-11): each send is charged at once to the
 * tx lane of the data listener's NIC in the node-local admission window ({@link NodeAdmissionService}), beside
 * engines' P/D WRITEs on that lane, and returned when the send physically ended (the data listener completes the
 * charge from the write's completion, never on a timer). A NIC that is not in {@code --admission-nics} is not
 * charged. Wiring only: the accounting is {@code orbitkv.recovery.NodeAdmission}'s.
 */
final class NodeEgressAccount implements EgressAccount {
    private final NodeAdmissionService node;

    NodeEgressAccount(NodeAdmissionService node) {
        this.node = Objects.requireNonNull(node, "node");
    }

    @Override
    public Charge charge(String nic, long bytes) {
        NodeAdmissionService.ManagerCharge c = node.chargeManagerEgress(nic, bytes);
        if (!c.granted()) {
            return new Charge.Refused(c.refused().detail());
        }
        return c.leases().isEmpty() ? Charge.Held.FREE : new Charge.Held(() -> node.returnManagerEgress(c, bytes));
    }
}
