/**
 * Both ends of InventorySession v4 (DESIGN §5; RULES SES-*, DELTA-*, SNAP-*): {@link
 * orbitkv.inventory.session.SessionServer} and its per-stream {@link orbitkv.inventory.session.SourceSession}
 * (Open validation, credit ledger, snapshot/replay/delta pump), {@link orbitkv.inventory.session.Subscriber} and
 * its per-source {@link orbitkv.inventory.session.RequesterSession} (frame validation, application into a
 * {@code ViewReceiver}, ACK cadence, reconnect). Not exported: the contract is {@code InventorySessionServer},
 * {@code InventorySubscriber}, {@code SessionConfig} and the status records in {@code orbitkv.inventory}.
 */
package orbitkv.inventory.session;
