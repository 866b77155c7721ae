package orbitkv.conformance.perf;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * PNG plots of the harnesses (JFreeChart, headless): latency CDFs and grouped bars, written into the run directory
 * and, with {@code -Dbench.docsPlots=DIR}, copied there too (docs/perf for the report).
 */
public final class Plots {
    private static final int WIDTH = 900;
    private static final int HEIGHT = 520;

    /** Distinguishable on white, also in grey scale order. */
    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0x9467bd),
        new Color(0xff7f0e), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f), new Color(0x17becf), new Color(0xbcbd22)};

    private Plots() {}

    static {
        System.setProperty("java.awt.headless", "true");
    }

    /** The CDF of each endpoint's measured visibility samples. */
    public static Path visibilityCdf(BenchRun run, Map<VisibilityHarness.Endpoint, List<VisibilityHarness.Sample>> samples) {
        Map<String, long[]> series = new LinkedHashMap<>();
        samples.forEach((e, l) -> series.put(e.label, l.stream().filter(s -> !s.warmup()).mapToLong(VisibilityHarness.Sample::visibilityNs).toArray()));
        return cdf(run, "visibility-cdf.png", "Visibility across Managers: the four endpoints (PERF-2)", series);
    }

    /** Empirical CDFs of nanosecond samples on a logarithmic millisecond axis. */
    public static Path cdf(BenchRun run, String file, String title, Map<String, long[]> seriesNanos) {
        XYSeriesCollection data = new XYSeriesCollection();
        for (Map.Entry<String, long[]> e : seriesNanos.entrySet()) {
            long[] s = e.getValue().clone();
            Arrays.sort(s);
            XYSeries xy = new XYSeries(e.getKey() + " (n=" + s.length + ")", false, true);
            for (int i = 0; i < s.length; i++) {
                xy.add(Math.max(1e-3, s[i] / 1e6), (i + 1) / (double) s.length);
            }
            data.addSeries(xy);
        }
        JFreeChart chart = ChartFactory.createXYLineChart(title, "latency (ms, log scale)", "fraction of samples <= x", data,
                PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        LogAxis x = new LogAxis("latency (ms, log scale)");
        x.setSmallestValue(1e-3);
        x.setNumberFormatOverride(new java.text.DecimalFormat("0.###"));
        plot.setDomainAxis(x);
        ((NumberAxis) plot.getRangeAxis()).setRange(0, 1.0);
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            r.setSeriesStroke(i, new BasicStroke(2f));
            r.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        plot.setRenderer(r);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        return save(run, file, chart);
    }

    /** Grouped bars: {@code values.get(series).get(category)}. */
    public static Path bars(BenchRun run, String file, String title, String valueLabel, Map<String, Map<String, Double>> values) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        values.forEach((series, byCategory) -> byCategory.forEach((category, v) -> data.addValue(v, series, category)));
        JFreeChart chart = ChartFactory.createBarChart(title, null, valueLabel, data, PlotOrientation.VERTICAL, true, false, false);
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.getDomainAxis().setCategoryLabelPositions(org.jfree.chart.axis.CategoryLabelPositions.UP_45);
        plot.getDomainAxis().setMaximumCategoryLabelWidthRatio(2.0f);
        org.jfree.chart.renderer.category.BarRenderer r = (org.jfree.chart.renderer.category.BarRenderer) plot.getRenderer();
        r.setBarPainter(new org.jfree.chart.renderer.category.StandardBarPainter());
        r.setShadowVisible(false);
        for (int i = 0; i < data.getRowCount(); i++) {
            r.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        return save(run, file, chart);
    }

    /**
     * Scaling curves: one line per series of {x, y} points, logarithmic y (and x if {@code logX}); points with y <= 0
     * are left out (a log axis has no zero).
     */
    public static Path curves(BenchRun run, String file, String title, String xLabel, String yLabel, Map<String, double[][]> series,
            boolean logX) {
        XYSeriesCollection data = new XYSeriesCollection();
        for (Map.Entry<String, double[][]> e : series.entrySet()) {
            XYSeries xy = new XYSeries(e.getKey(), true, true);
            for (double[] pt : e.getValue()) {
                if (pt[1] > 0 && Double.isFinite(pt[1])) {
                    xy.add(pt[0], pt[1]);
                }
            }
            data.addSeries(xy);
        }
        JFreeChart chart = ChartFactory.createXYLineChart(title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        if (logX) {
            LogAxis x = new LogAxis(xLabel);
            x.setBase(2);
            x.setTickUnit(new org.jfree.chart.axis.NumberTickUnit(1.0)); // one tick per power of two
            x.setNumberFormatOverride(new java.text.DecimalFormat("#,##0"));
            plot.setDomainAxis(x);
        }
        LogAxis y = new LogAxis(yLabel);
        y.setSmallestValue(1e-3);
        y.setTickUnit(new org.jfree.chart.axis.NumberTickUnit(1.0)); // one tick per power of ten
        y.setMinorTickCount(9);
        y.setMinorTickMarksVisible(true);
        y.setNumberFormatOverride(new java.text.DecimalFormat("0.###"));
        plot.setRangeAxis(y);
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            r.setSeriesStroke(i, new BasicStroke(2f));
            r.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        plot.setRenderer(r);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        return save(run, file, chart);
    }

    /** Grouped bars with a horizontal threshold line (the isolation contract's per-run p99 ratios against 1.05). */
    public static Path barsWithThreshold(BenchRun run, String file, String title, String valueLabel, Map<String, Map<String, Double>> values,
            double threshold, double lowerBound) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        values.forEach((series, byCategory) -> byCategory.forEach((category, v) -> data.addValue(v, series, category)));
        JFreeChart chart = ChartFactory.createBarChart(title, null, valueLabel, data, PlotOrientation.VERTICAL, true, false, false);
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        org.jfree.chart.plot.ValueMarker m = new org.jfree.chart.plot.ValueMarker(threshold, Color.BLACK, new BasicStroke(2f,
                BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
        m.setLabel("threshold " + threshold);
        m.setLabelAnchor(org.jfree.chart.ui.RectangleAnchor.TOP_LEFT);
        m.setLabelTextAnchor(org.jfree.chart.ui.TextAnchor.BOTTOM_LEFT);
        plot.addRangeMarker(m);
        double max = threshold;
        for (Map<String, Double> byCategory : values.values()) {
            for (double v : byCategory.values()) {
                if (Double.isFinite(v)) {
                    max = Math.max(max, v);
                }
            }
        }
        ((NumberAxis) plot.getRangeAxis()).setRange(lowerBound, max * 1.05);
        org.jfree.chart.renderer.category.BarRenderer r = (org.jfree.chart.renderer.category.BarRenderer) plot.getRenderer();
        r.setBarPainter(new org.jfree.chart.renderer.category.StandardBarPainter());
        r.setShadowVisible(false);
        for (int i = 0; i < data.getRowCount(); i++) {
            r.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        return save(run, file, chart);
    }

    private static Path save(BenchRun run, String file, JFreeChart chart) {
        try {
            Path p = run.dir().resolve(file);
            ChartUtils.saveChartAsPNG(p.toFile(), chart, WIDTH, HEIGHT);
            String docs = System.getProperty("bench.docsPlots");
            if (docs != null) {
                Path d = Files.createDirectories(Path.of(docs));
                Files.copy(p, d.resolve(file), StandardCopyOption.REPLACE_EXISTING);
            }
            run.report("  plot: " + p);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
