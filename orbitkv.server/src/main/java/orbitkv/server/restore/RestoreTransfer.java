package orbitkv.server.restore;

import java.util.Optional;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.server.admission.NodeAdmissionService;
import orbitkv.server.transfer.PeerTransfer;
import orbitkv.server.transfer.ReceiveCredits;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.TransferEngine;

/**
 * What a peer route needs of this incarnation's transfer ends: who this process is, the admitted members, the engine
 * (Authorize, READ, release), the receive window and the READ settings. {@link #of} adapts the Manager's
 * {@link PeerTransfer}; unit tests pass a fake engine.
 */
public interface RestoreTransfer {
    Incarnation self();

    /** The admitted member of {@code owner}, empty when it left the membership view. */
    Optional<Member> member(Incarnation owner);

    TransferEngine engine();

    /** The requester's receive window (ROUTE-11), taken before a peer route's Authorize. */
    ReceiveCredits receiveCredits();

    /**
     * The node-local admission window (issue 39): a peer route asks it for room before its authorization and charges
     * each READ to it; empty with {@code --admission-disabled} (and in unit tests' fakes).
     */
    default Optional<NodeAdmissionService> admission() {
        return Optional.empty();
    }

    /** The READ backend of a restore that names none. */
    BackendPolicy defaultBackend();

    /** Bound on one Authorize. */
    long authorizeTimeoutMs();

    /** READs of one peer route in flight at once ({@code --restore-route-reads-in-flight-max}). */
    int readsInFlightPerRoute();

    /** The Manager's transfer ends. */
    static RestoreTransfer of(PeerTransfer t) {
        return new RestoreTransfer() {
            @Override
            public Incarnation self() {
                return t.self();
            }

            @Override
            public Optional<Member> member(Incarnation owner) {
                return t.member(owner);
            }

            @Override
            public TransferEngine engine() {
                return t.engine();
            }

            @Override
            public ReceiveCredits receiveCredits() {
                return t.receiveCredits();
            }

            @Override
            public Optional<NodeAdmissionService> admission() {
                return t.admission();
            }

            @Override
            public BackendPolicy defaultBackend() {
                return t.defaultBackend();
            }

            @Override
            public long authorizeTimeoutMs() {
                return t.config().authorizeTimeoutMs();
            }

            @Override
            public int readsInFlightPerRoute() {
                return t.restoreReadsInFlightPerRoute();
            }
        };
    }
}
