/**
 * Both ends of InventorySession v4 (DESIGN §5; RULES SES-*, DELTA-*, SNAP-*): {@link
 * orbitkv.inventory.session.SessionServer} and its per-stream {@link orbitkv.inventory.session.SourceSession}
 * (Open validation, credit ledger, snapshot/replay/delta pump), {@link orbitkv.inventory.session.Subscriber} and
 * its per-source {@link orbitkv.inventory.session.RequesterSession} (frame validation, application into a
 * {@code ViewReceiver}, ACK cadence, reconnect). Each end is driven by a sealed state machine with one
 * transition function ({@link orbitkv.inventory.session.SourceState}, {@link orbitkv.inventory.session.RequesterState})
 * and waits on one {@link orbitkv.inventory.session.WakeSignal}. Not exported: the contract is
 * {@code InventorySessionServer}, {@code InventorySubscriber}, {@code SessionConfig}, the status records and the
 * metric snapshot records in {@code orbitkv.inventory}.
 */
package orbitkv.inventory.session;
