package orbitkv.conformance.kit;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/**
 * The run's output: one line per scenario as it completes ({@code VERDICT side/scenario [RULE-IDs] detail}),
 * a summary line, and a JUnit XML file (one {@code testcase} per scenario; FAIL as {@code failure},
 * N/A and NOT-OBSERVABLE as {@code skipped} with the reason, so CI tools show every row).
 */
final class KitReport {
    /** One scenario's result. */
    record Entry(ScenarioRow row, Verdict verdict, long millis) {}

    private final PrintStream out;
    private final List<Entry> entries = new ArrayList<>();

    KitReport(PrintStream out) {
        this.out = out;
    }

    void add(ScenarioRow row, Verdict verdict, long millis) {
        entries.add(new Entry(row, verdict, millis));
        out.printf(Locale.ROOT, "%-14s %-36s %-28s %s (%d ms)%n", verdict.word(), row.id(),
                "[" + String.join(" ", row.rules()) + "]", verdict.detail(), millis);
        out.flush();
    }

    List<Entry> entries() {
        return List.copyOf(entries);
    }

    long count(Class<? extends Verdict> kind) {
        return entries.stream().filter(e -> kind.isInstance(e.verdict())).count();
    }

    /** True iff no scenario failed and at least one passed; policy rows never decide it. */
    boolean passed() {
        return count(Verdict.Failed.class) == 0 && count(Verdict.Passed.class) > 0;
    }

    /** The summary line; policy rows (POLICY-PASS, POLICY-DIFFERS) are counted apart from the verdicts that decide the run. */
    String summary(Path report) {
        return String.format(Locale.ROOT, "orbitkv conformance: %d scenarios: %d passed, %d failed, %d not applicable, "
                + "%d not observable black-box; policy rows %d (%d as this implementation, %d differ); report %s", entries.size(),
                count(Verdict.Passed.class), count(Verdict.Failed.class), count(Verdict.NotApplicable.class),
                count(Verdict.NotObservable.class), count(Verdict.PolicyPass.class) + count(Verdict.PolicyDiffers.class),
                count(Verdict.PolicyPass.class), count(Verdict.PolicyDiffers.class), report);
    }

    /** Writes the JUnit XML report (to a temporary file first, then moved into place). */
    void writeJUnitXml(Path file, String target) {
        try {
            Path dir = file.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, ".orbitkv-conformance-", ".xml");
            try (OutputStream os = Files.newOutputStream(tmp)) {
                XMLStreamWriter w = XMLOutputFactory.newFactory().createXMLStreamWriter(os, "UTF-8");
                w.writeStartDocument("UTF-8", "1.0");
                w.writeCharacters("\n");
                w.writeStartElement("testsuite");
                w.writeAttribute("name", "orbitkv-conformance");
                w.writeAttribute("tests", Integer.toString(entries.size()));
                w.writeAttribute("failures", Long.toString(count(Verdict.Failed.class)));
                w.writeAttribute("errors", "0");
                w.writeAttribute("skipped", Long.toString(count(Verdict.NotApplicable.class) + count(Verdict.NotObservable.class)
                        + count(Verdict.PolicyDiffers.class)));
                w.writeAttribute("time", seconds(entries.stream().mapToLong(Entry::millis).sum()));
                w.writeCharacters("\n");
                w.writeStartElement("properties");
                property(w, "target", target);
                w.writeEndElement();
                w.writeCharacters("\n");
                for (Entry e : entries) {
                    w.writeStartElement("testcase");
                    w.writeAttribute("classname", "orbitkv.conformance." + e.row().side());
                    w.writeAttribute("name", e.row().scenario() + " [" + String.join(" ", e.row().rules()) + "]");
                    w.writeAttribute("time", seconds(e.millis()));
                    switch (e.verdict()) {
                        case Verdict.Failed f -> {
                            w.writeStartElement("failure");
                            w.writeAttribute("message", f.detail());
                            w.writeCharacters("expected " + e.row().expected() + "; " + f.detail());
                            w.writeEndElement();
                        }
                        case Verdict.NotApplicable na -> skipped(w, na.detail());
                        case Verdict.NotObservable no -> skipped(w, no.detail());
                        case Verdict.Passed p -> {
                            w.writeStartElement("system-out");
                            w.writeCharacters(p.detail());
                            w.writeEndElement();
                        }
                        case Verdict.PolicyPass p -> {
                            w.writeStartElement("system-out");
                            w.writeCharacters("POLICY-PASS " + p.detail());
                            w.writeEndElement();
                        }
                        case Verdict.PolicyDiffers p -> skipped(w, "POLICY-DIFFERS (permitted by the design, never a failure): "
                                + p.detail());
                    }
                    w.writeEndElement();
                    w.writeCharacters("\n");
                }
                w.writeEndElement();
                w.writeCharacters("\n");
                w.writeEndDocument();
                w.close();
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the report " + file + ": " + e.getMessage(), e);
        } catch (XMLStreamException e) {
            throw new IllegalStateException("cannot write the report " + file, e);
        }
    }

    private static void skipped(XMLStreamWriter w, String reason) throws XMLStreamException {
        w.writeEmptyElement("skipped");
        w.writeAttribute("message", reason);
    }

    private static void property(XMLStreamWriter w, String name, String value) throws XMLStreamException {
        w.writeEmptyElement("property");
        w.writeAttribute("name", name);
        w.writeAttribute("value", value);
    }

    private static String seconds(long millis) {
        return String.format(Locale.ROOT, "%.3f", millis / 1000.0);
    }
}
