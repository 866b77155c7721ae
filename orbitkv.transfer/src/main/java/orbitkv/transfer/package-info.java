/**
 * Transfer contract (DESIGN §8). The engine arrives with its own issue; this package holds the SPI
 * through which a source pins payload bytes it owns (INV-2: only the source validates and pins).
 */
package orbitkv.transfer;
