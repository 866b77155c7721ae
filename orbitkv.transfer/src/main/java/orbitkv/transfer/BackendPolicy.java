package orbitkv.transfer;

/** Which backend a READ may use. */
public enum BackendPolicy {
    /** Always the TCP data channel. */
    TCP_ONLY,
    /**
     * Shared memory when the grant is {@link Grant#sharedMemoryEligible()} and the block is in the source's DRAM
     * arena; otherwise TCP (an SSD block, another host, or an arena that cannot be mapped), counted by
     * {@link SharedMemoryFallback}.
     */
    SHARED_MEMORY_PREFERRED
}
