package orbitkv.server.config;

import static orbitkv.server.config.SettingRelations.require;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import orbitkv.recovery.AdmissionPolicy;
import orbitkv.recovery.NicLane;

/**
 * The {@code --admission-*} options (issue 39, DESIGN S6; ROUTE-11): the node-local admission window and pacer per
 * NIC and direction. {@link #policy()} maps them onto orbitkv.recovery's {@link AdmissionPolicy}.
 *
 * @param enabled false with {@code --admission-disabled}
 * @param nicPaces the admitted NICs in the order given, each with its pace (bytes/s, 0: unpaced)
 * @param windowBytesMax per lane, reserve included
 * @param reservePercent 0..90
 * @param leaseBatchBytesMax the largest lease
 * @param leaseTtlMs a lease's trusted life
 * @param queueMax waiting credit requests
 * @param agingMs the aging bound
 * @param submittersMax registered submitters
 * @param leasesMax outstanding leases
 */
public record AdmissionOptions(boolean enabled, Map<String, Long> nicPaces, long windowBytesMax, int reservePercent,
        long leaseBatchBytesMax, long leaseTtlMs, int queueMax, long agingMs, int submittersMax, int leasesMax) {
    /** At most 32 NICs (64 lanes, {@link AdmissionPolicy#LANES_MAX}). */
    public static final int NICS_MAX = AdmissionPolicy.LANES_MAX / 2;

    public AdmissionOptions {
        nicPaces = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(nicPaces, "nicPaces")));
    }

    /** The window usable by OrbitKV's submitters: the window minus the reserve. */
    public long usableBytes() {
        return new AdmissionPolicy.LaneLimits(windowBytesMax, 0, reservePercent).usableBytes();
    }

    /** The first NIC listed (Manager READs on a wildcard peer host charge its rx lane). */
    public String firstNic() {
        return nicPaces.keySet().iterator().next();
    }

    /** orbitkv.recovery's policy: an rx and a tx lane per NIC. */
    public AdmissionPolicy policy() {
        Map<NicLane, AdmissionPolicy.LaneLimits> lanes = new LinkedHashMap<>();
        nicPaces.forEach((nic, pace) -> {
            AdmissionPolicy.LaneLimits l = new AdmissionPolicy.LaneLimits(windowBytesMax, pace, reservePercent);
            lanes.put(new NicLane(nic, NicLane.Direction.RX), l);
            lanes.put(new NicLane(nic, NicLane.Direction.TX), l);
        });
        return new AdmissionPolicy(lanes, leaseBatchBytesMax, leaseTtlMs * 1_000_000L, queueMax, agingMs * 1_000_000L,
                submittersMax, leasesMax);
    }

    static AdmissionOptions parse(RawValues v) {
        long pace = v.size(Setting.ADMISSION_PACE_BYTES_PER_SECOND, 0);
        return new AdmissionOptions(!v.flag(Setting.ADMISSION_DISABLED), nics(v.text(Setting.ADMISSION_NICS), pace),
                v.size(Setting.ADMISSION_WINDOW_BYTES_MAX, 1), v.count(Setting.ADMISSION_RESERVE_PERCENT, 0, 90),
                v.size(Setting.ADMISSION_LEASE_BATCH_BYTES_MAX, 1), v.ms(Setting.ADMISSION_LEASE_TTL_MS, 1, 3_600_000),
                v.count(Setting.ADMISSION_QUEUE_MAX, 1, 1_000_000), v.ms(Setting.ADMISSION_AGING_MS, 1, 3_600_000),
                v.count(Setting.ADMISSION_SUBMITTERS_MAX, 2, 65_536), v.count(Setting.ADMISSION_LEASES_MAX, 1, 1_000_000));
    }

    /** {@code NAME[:RATE],...}: 1..32 distinct legal interface names. */
    static Map<String, Long> nics(String text, long defaultPace) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String item : text == null ? new String[0] : text.split(",", -1)) {
            String[] parts = item.trim().split(":", -1);
            require(parts.length <= 2, "--admission-nics: '" + item.trim() + "' is not NAME or NAME:RATE");
            String nic = parts[0];
            try {
                NicLane.checkNicName(nic);
            } catch (IllegalArgumentException e) {
                throw new ConfigException("--admission-nics: " + e.getMessage());
            }
            long pace = defaultPace;
            if (parts.length == 2) {
                try {
                    pace = SizeParser.parse(Setting.ADMISSION_NICS, parts[1]);
                } catch (IllegalArgumentException e) {
                    throw new ConfigException("--admission-nics: rate of " + nic + ": " + e.getMessage());
                }
            }
            require(out.put(nic, pace) == null, "--admission-nics names " + nic + " twice");
        }
        require(!out.isEmpty() && out.size() <= NICS_MAX, "--admission-nics must name 1.." + NICS_MAX + " NICs, got "
                + out.size());
        return out;
    }
}
