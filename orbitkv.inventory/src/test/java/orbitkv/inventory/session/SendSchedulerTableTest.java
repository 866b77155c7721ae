package orbitkv.inventory.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import orbitkv.testing.TableRows;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The source's send scheduling (ROUTE-10, issue 39 item 5) as a table over the sans-I/O {@link SendScheduler}.
 * Columns: {@code permits,queuedMax,priority} | script | outcomes. Script tokens: {@code a:N+} session a asks at
 * NORMAL (H: HIGH, B: BARRIER) → G granted, Q queued, R refused by name; {@code a-} a's step ends → the sessions
 * granted now, {@code [b,c]}; {@code a!} a ended (cancel) → granted now; {@code a?} should a's running step yield →
 * y/n. E: the call threw IllegalStateException (a shell bug, refused loudly). The scheduler only picks between
 * sessions; what a step sends and in which order is the pump's and untouched (the simulator checks that part).
 */
@Tag("unit")
class SendSchedulerTableTest {
    static final String TABLE = """
            # permits,queued,prio | script                                   | outcomes
            1,8,on  | a:N+ b:N+ c:N+ a- b-                           | G Q Q [b] [c]        # ROUTE-10 one class: first come first served
            1,8,on  | a:N+ b:N+ c:B+ a- c-                           | G Q Q [c] [b]        # ROUTE-10 a barrier's session goes before earlier bulk work
            1,8,on  | a:N+ b:N+ c:H+ d:B+ a- d- c-                   | G Q Q Q [d] [c] [b]  # ROUTE-10 barrier > favoured subscription > normal
            1,8,off | a:N+ b:N+ c:B+ a- b-                           | G Q Q [b] [c]        # ROUTE-10 priority off: first come first served
            1,8,on  | a:N+ b:B+ a?                                   | G Q y                # ROUTE-10 a running bulk step yields to a waiting barrier
            1,8,on  | a:H+ b:H+ a?                                   | G Q n                # ROUTE-10 equal class: no yield
            1,8,on  | a:B+ b:H+ a?                                   | G Q n                # ROUTE-10 a lower class never preempts
            1,8,off | a:N+ b:B+ a?                                   | G Q n                # ROUTE-10 priority off: no yield
            1,8,on  | a:N+ b:N+ c:N+ b:B+ a-                         | G Q Q Q [b]          # ROUTE-10 a barrier raises a queued session in place
            1,8,on  | a:N+ b:B+ c:N+ b:N+ a- b-                      | G Q Q Q [b] [c]      # ROUTE-10 a met barrier lowers it, keeping its place
            2,8,on  | a:N+ b:N+ c:B+ d:N+ a- b-                      | G G Q Q [c] [d]      # ROUTE-10 permits: two steps at once
            1,2,on  | a:N+ b:N+ c:N+ d:B+ b- c!                      | G Q Q R E []         # ROUTE-10 BND-1 bounded queue: refused by name; unknown release refused
            1,8,on  | a:N+ b:N+ c:N+ b! a-                           | G Q Q [] [c]         # ROUTE-10 an ended session leaves the queue
            1,8,on  | a:N+ b:N+ a!                                   | G Q [b]              # ROUTE-10 an ended running session frees its permit
            1,8,on  | a:N+ a:N+                                      | G E                  # ROUTE-10 a session asks again only after its step ended
            """;

    @TestFactory
    @DisplayName("ROUTE-10: the send scheduler's table")
    List<DynamicTest> table() {
        List<DynamicTest> tests = new ArrayList<>();
        for (TableRows.Row row : TableRows.parse("SendSchedulerTableTest", TABLE.lines().toList(), TableRows.BARS, 3)) {
            tests.add(DynamicTest.dynamicTest(row.name() + " " + row.column(1), () -> runRow(row)));
        }
        assertTrue(tests.size() >= 15);
        return tests;
    }

    private static void runRow(TableRows.Row row) {
        String[] cfg = row.column(0).split(",");
        SendScheduler<String> s = new SendScheduler<>(Integer.parseInt(cfg[0]), Integer.parseInt(cfg[1]), cfg[2].equals("on"));
        List<String> out = new ArrayList<>();
        for (String t : row.column(1).split("\\s+")) {
            out.add(step(s, t));
        }
        assertEquals(row.column(2), String.join(" ", out), row.name());
    }

    private static String step(SendScheduler<String> s, String t) {
        char op = t.charAt(t.length() - 1);
        try {
            if (op == '+') {
                String[] kp = t.substring(0, t.length() - 1).split(":");
                SendPriority p = switch (kp[1]) {
                    case "N" -> SendPriority.NORMAL;
                    case "H" -> SendPriority.HIGH;
                    case "B" -> SendPriority.BARRIER;
                    default -> throw new IllegalArgumentException(kp[1]);
                };
                return switch (s.request(kp[0], p)) {
                    case SendScheduler.Admission.Granted g -> "G";
                    case SendScheduler.Admission.Queued q -> "Q";
                    case SendScheduler.Admission.Refused r -> r.detail().contains("queuedMax") ? "R" : "R?";
                };
            }
            String k = t.substring(0, t.length() - 1);
            return switch (op) {
                case '-' -> "[" + String.join(",", s.release(k)) + "]";
                case '!' -> "[" + String.join(",", s.cancel(k)) + "]";
                case '?' -> s.shouldYield(k) ? "y" : "n";
                default -> throw new IllegalArgumentException(t);
            };
        } catch (IllegalStateException e) {
            return "E";
        }
    }

    @Test
    @DisplayName("ROUTE-10: aging: a NORMAL session waiting behind a stream of HIGH requests runs within AGING_PASSES + 1 grants")
    void agingNeverStarves() {
        SendScheduler<String> s = new SendScheduler<>(1, 64, true);
        assertEquals(SendScheduler.GRANTED, s.request("h0", SendPriority.HIGH));
        assertEquals(SendScheduler.QUEUED, s.request("bulk", SendPriority.NORMAL));
        String running = "h0";
        for (int i = 1; i <= 2 * SendScheduler.AGING_PASSES; i++) {
            s.request("h" + i, SendPriority.HIGH); // a new favoured request arrives during every step
            List<String> next = s.release(running);
            assertEquals(1, next.size());
            running = next.getFirst();
            if (running.equals("bulk")) {
                assertTrue(i <= SendScheduler.AGING_PASSES + 1, "bulk ran at grant " + i);
                assertEquals(0, s.refusals());
                return;
            }
        }
        throw new AssertionError("the NORMAL session starved behind " + 2 * SendScheduler.AGING_PASSES + " HIGH grants");
    }

    @Test
    @DisplayName("ROUTE-10 BND-1: a refused request changes no state and is counted")
    void refusalChangesNothing() {
        SendScheduler<String> s = new SendScheduler<>(1, 1, true);
        s.request("a", SendPriority.NORMAL);
        s.request("b", SendPriority.NORMAL);
        assertTrue(s.request("c", SendPriority.BARRIER) instanceof SendScheduler.Admission.Refused);
        assertEquals(1, s.refusals());
        assertEquals(1, s.queuedCount());
        assertEquals(List.of("b"), s.release("a"));
    }
}
