package orbitkv.recovery;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import orbitkv.inventory.StateKey;

/**
 * What route execution needs from the data plane (ROUTE-7, ROUTE-8, ROUTE-11), implemented by the Manager with
 * its transfer engine (peer routes) and its tiers (local routes). The executor drives one request with at most
 * one READ in flight plus one next authorization, and it owns every resource it acquired until terminal evidence.
 *
 * <p>Resource order per route: {@link #credits} (receive credits and a destination), then {@link #authorize}
 * (source generation check, pins, grant), then {@link SourceGrant#read}. Before submission the executor releases
 * whatever a refused or abandoned route holds at once. After submission it releases the grant and the credit only
 * when {@link ReadSubmission#drained()} completes, whatever the READ's outcome or the wait's: a timed-out or
 * cancelled wait is not drain, and the destination of an unfinished READ is never exposed or reused.
 *
 * @param <D> the Manager's destination type (requester-owned memory for one route's blocks)
 */
public interface TransferPorts<D> {
    /**
     * Reserves receive credits (a bounded in-flight byte window, ROUTE-11) and a destination for all of
     * {@code route}'s bytes. Never blocks.
     */
    CreditOutcome<D> credits(Route route);

    /**
     * Asks the route's source to authorize exactly the route's blocks at their sequences: the source validates
     * the owner incarnation and each generation and pins the bytes (INV-2). Blocks at most until
     * {@code deadlineNanos}; an authorization still open then is a refusal the implementation reports as
     * {@link AdmissionRefusal#UNREACHABLE}.
     */
    GrantOutcome<D> authorize(Route route, long deadlineNanos);

    /** The outcome of {@link #credits}. */
    sealed interface CreditOutcome<D> {
        record Held<D>(ReceiveCredit<D> credit) implements CreditOutcome<D> {
            public Held {
                Objects.requireNonNull(credit, "credit");
            }
        }

        record Refused<D>(AdmissionRefusal reason, String detail) implements CreditOutcome<D> {
            public Refused {
                Objects.requireNonNull(reason, "reason");
                Objects.requireNonNull(detail, "detail");
            }
        }
    }

    /**
     * Receive credits plus the destination they cover. {@link #release()} returns the window bytes and frees an
     * undelivered destination; a delivered destination belongs to the caller of the restore. Called exactly once
     * by the executor; implementations make it idempotent anyway.
     */
    interface ReceiveCredit<D> {
        long bytes();

        D destination();

        void release();
    }

    /** The outcome of {@link #authorize}. */
    sealed interface GrantOutcome<D> {
        record Granted<D>(SourceGrant<D> grant) implements GrantOutcome<D> {
            public Granted {
                Objects.requireNonNull(grant, "grant");
            }
        }

        /**
         * @param reason why
         * @param refusedKeys the refused keys when the source names them (per-key refusals); empty means the
         *     whole route
         * @param detail a message for the trace and the log
         */
        record Refused<D>(AdmissionRefusal reason, List<StateKey> refusedKeys, String detail) implements GrantOutcome<D> {
            public Refused {
                Objects.requireNonNull(reason, "reason");
                refusedKeys = List.copyOf(refusedKeys);
                Objects.requireNonNull(detail, "detail");
            }
        }
    }

    /** A source grant for one route: pinned bytes at the source, released by the executor exactly once. */
    interface SourceGrant<D> {
        /** Submits the READ of every granted block into {@code destination}. Never blocks on the transfer. */
        ReadSubmission read(D destination);

        /** Releases the grant (before submission: abandon; after submission: only once drained). */
        void release();
    }

    /** A submitted READ: host readiness and physical drain are separate events (INV-8). */
    interface ReadSubmission {
        /** Completes with the READ's terminal outcome (host-ready or payload failure). */
        CompletableFuture<ReadyOutcome> ready();

        /** Completes when nothing will touch the destination or the source's bytes any more. */
        CompletableFuture<Void> drained();
    }

    /** The terminal outcome of a READ. */
    sealed interface ReadyOutcome {
        /** Every block is in the destination, verified (checksums). */
        record Ready() implements ReadyOutcome {}

        /**
         * The bytes did not arrive intact (cut, corrupt, short); the destination must not be exposed.
         *
         * @param reason a short lowercase name
         * @param detail a message for the trace and the log
         */
        record PayloadFailure(String reason, String detail) implements ReadyOutcome {
            public PayloadFailure {
                Objects.requireNonNull(reason, "reason");
                Objects.requireNonNull(detail, "detail");
            }
        }
    }
}
