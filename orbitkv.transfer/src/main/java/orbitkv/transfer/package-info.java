/**
 * Transfer contract (DESIGN §8; docs/transfer.md). Source side: {@link orbitkv.transfer.PayloadSource} (the SPI
 * the payload owner implements), {@link orbitkv.transfer.TransferSource} (authorization service, grants and
 * bounded pins, TCP data listener). Requester side: {@link orbitkv.transfer.TransferEngine} (authorize, READ into
 * a {@link orbitkv.transfer.Destination}, release). Outcomes are sealed types ({@link
 * orbitkv.transfer.AuthorizeOutcome}, {@link orbitkv.transfer.ReadResult}, {@link
 * orbitkv.transfer.ReleaseOutcome}); bounds live in {@link orbitkv.transfer.TransferConfig}; metrics are plain
 * snapshot records ({@link orbitkv.transfer.TransferSourceStatus}, {@link orbitkv.transfer.TransferEngineStatus})
 * keyed by closed enums.
 */
package orbitkv.transfer;
