/**
 * Transfer (DESIGN §8): source authorization (generation check, bounded pins, grants), byte credits,
 * READ into requester-owned memory, backends, drain and terminal evidence.
 *
 * <p>Exports only {@code orbitkv.transfer}; inventory and membership types appear in its signatures.
 * Netty is an implementation detail of the TCP backend and is not transitive.
 */
module orbitkv.transfer {
    exports orbitkv.transfer;

    requires transitive orbitkv.inventory;
    requires transitive orbitkv.membership;
    requires io.netty.buffer;
    requires io.netty.transport;
}
