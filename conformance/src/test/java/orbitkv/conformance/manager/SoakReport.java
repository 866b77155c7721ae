package orbitkv.conformance.manager;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.manager.SoakVerdict.Metric;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The soak's outputs (issue 37 item 6): the samples as CSV, one PNG per metric (one line per Manager life, minutes on
 * x, MiB for byte series), and the report text: the workload's counts, the events, and the verdict table.
 */
final class SoakReport {
    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
            new Color(0x9467bd), new Color(0xff7f0e), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f)};

    private SoakReport() {}

    /** The report text: conditions, workload, events, verdict table, overall verdict. */
    static List<String> text(String title, SoakRun.Result r) {
        List<String> lines = new ArrayList<>();
        lines.add("# " + title);
        lines.add("workload: " + r.workload().summary());
        r.workload().mismatchNotes.forEach(n -> lines.add("MISMATCH " + n));
        lines.add("samples: " + r.samples().size() + " (" + r.skippedSamples() + " instants skipped: a member restarting or not answering)");
        lines.add("events (" + r.events().size() + ", " + r.eventFailures() + " failed):");
        r.events().forEach(e -> lines.add("  " + e));
        lines.add("");
        lines.add(SoakVerdict.HEADER);
        lines.add("|---|---|---|---|---|---|---|---|");
        r.judgements().forEach(j -> lines.add(j.row()));
        lines.add("");
        lines.add("soak verdict: " + (r.passed() ? "PASS" : "FAIL") + " (mismatches " + r.workload().mismatches
                + ", growing series " + r.judgements().stream().filter(j -> j.status() == SoakVerdict.Status.GROWING).count()
                + ", event failures " + r.eventFailures() + ")");
        return lines;
    }

    /** Writes {@code prefix-samples.csv}, {@code prefix-report.txt} and {@code prefix-METRIC.png} into {@code dir}. */
    static List<Path> write(Path dir, String prefix, String title, SoakRun.Result r) throws IOException {
        Files.createDirectories(dir);
        List<Path> out = new ArrayList<>();
        List<String> rows = new ArrayList<>(List.of(SoakSampler.csvHeader()));
        r.samples().forEach(s -> rows.add(s.csv()));
        out.add(Files.write(dir.resolve(prefix + "-samples.csv"), rows, StandardCharsets.UTF_8));
        out.add(Files.write(dir.resolve(prefix + "-report.txt"), text(title, r), StandardCharsets.UTF_8));
        for (Metric m : Metric.values()) {
            out.add(plot(dir.resolve(prefix + "-" + m.column() + ".png"), title, m, r.samples()));
        }
        return out;
    }

    private static Path plot(Path file, String title, Metric m, List<SoakSampler.Sample> samples) throws IOException {
        boolean bytes = m.column().endsWith("bytes");
        Map<String, XYSeries> byLife = new LinkedHashMap<>();
        for (SoakSampler.Sample s : samples) {
            double v = s.values()[m.ordinal()];
            if (Double.isFinite(v)) {
                byLife.computeIfAbsent(s.life(), k -> new XYSeries(k, true, true)).add(s.seconds() / 60, bytes ? v / (1 << 20) : v);
            }
        }
        XYSeriesCollection data = new XYSeriesCollection();
        byLife.values().forEach(data::addSeries);
        String y = bytes ? m.column().replace("_bytes", "") + " (MiB)" : m.column();
        JFreeChart chart = ChartFactory.createXYLineChart(title + ": " + m.column(), "minutes", y, data,
                PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesStroke(i, new BasicStroke(1.5f));
            renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        plot.setRenderer(renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        ChartUtils.saveChartAsPNG(file.toFile(), chart, 900, 420);
        return file;
    }
}
