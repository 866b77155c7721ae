package orbitkv.inventory.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 38 item 5: every seed the real-process campaign ever failed (docs/campaign.md "Regression table", column
 * "seed / scenario") maps to simulator schedules: the scenario names the {@link ProtocolSimulator.ScheduleClass}
 * that draws the same fault kinds, and the seed is replayed in that class
 * ({@code scripts/simulate --seed S --class SCENARIO}) together with the {@value #NEIGHBOURS} seeds after it. The
 * simulator draws its own fault times from the seed, so the mapping is by fault class, not by wall-clock timing
 * (the real process's timing is not reproducible; that is why the simulator exists). A new regression row is
 * picked up by this test without an edit.
 */
@Tag("unit")
class CampaignRegressionSeedsTest {
    /** Seeds of the same class replayed after each regression seed. */
    static final int NEIGHBOURS = 200;
    /** The regression rows present when this test was written: a table that loses rows fails here. */
    static final int REGRESSION_SEEDS_MIN = 6;

    /** A seed has at least three digits, so a row's "(27 TCP resets)" is not read as a seed. */
    private static final Pattern SEED_SCENARIO = Pattern.compile("\\b(\\d{3,})\\s+([A-Z][A-Z0-9_]+)\\b");

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS) // a hang guard only
    @DisplayName("SES-6 SES-11 SNAP-5 DELTA-7: every campaign regression seed replays in its simulator class, 0 violations")
    void everyCampaignRegressionSeedMapsToSimulatorSchedules() throws IOException {
        Map<Long, ProtocolSimulator.ScheduleClass> seeds = regressionSeeds();
        assertTrue(seeds.size() >= REGRESSION_SEEDS_MIN,
                "docs/campaign.md's regression table names " + seeds.size() + " seed/scenario pairs, expected >= "
                        + REGRESSION_SEEDS_MIN + ": " + seeds);
        List<String> violations = new ArrayList<>();
        seeds.forEach((seed, cls) -> {
            for (long s = seed; s <= seed + NEIGHBOURS; s++) {
                ProtocolSimulator.Result r = ProtocolSimulator.run(s, SimBug.NONE, ProtocolSimulator.schedule(s, cls));
                if (r.failed()) {
                    violations.add("scripts/simulate --seed " + s + " --class " + cls + ": " + r.violation());
                }
            }
            System.out.printf("campaign seed %d %s -> scripts/simulate --seed %d --class %s (+%d seeds)%n", seed, cls,
                    seed, cls, NEIGHBOURS);
        });
        assertEquals(List.of(), violations, "campaign regression seeds replayed in the simulator");
    }

    /** Every "SEED SCENARIO" pair of the regression table's second column, in table order. */
    static Map<Long, ProtocolSimulator.ScheduleClass> regressionSeeds() throws IOException {
        Path doc = Path.of(System.getProperty("user.dir")).getParent().resolve("docs/campaign.md");
        Map<Long, ProtocolSimulator.ScheduleClass> seeds = new LinkedHashMap<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(doc)) {
            if (line.startsWith("## ")) {
                inTable = line.equals("## Regression table");
                continue;
            }
            String[] cells = line.split("\\|");
            if (!inTable || cells.length < 3 || cells[2].contains("seed / scenario")) {
                continue;
            }
            Matcher m = SEED_SCENARIO.matcher(cells[2]);
            while (m.find()) { // an unknown scenario name is a broken row: valueOf fails the test and names it
                seeds.put(Long.parseLong(m.group(1)), ProtocolSimulator.ScheduleClass.valueOf(m.group(2)));
            }
        }
        return seeds;
    }
}
