package orbitkv.index.view;

import orbitkv.testing.ContractVerdicts;

/**
 * Measures retained heap per installed row at 1,000,000 rows (goal <= 128 B) and compares it with the
 * budget formula {@link RowCost}. Heap used after repeated full GCs, before and after populating. The goal is judged
 * through {@link ContractVerdicts}; a FAIL exits non-zero.
 *
 * <pre>java -Xmx2g -cp ... orbitkv.index.view.RowFootprintHarness [rows] [owners]</pre>
 */
public final class RowFootprintHarness {
    private RowFootprintHarness() {
    }

    public static void main(String[] args) throws InterruptedException {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int owners = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        long before = settledHeap();
        BenchWorld w = new BenchWorld(owners, 1L << 30);
        for (int o = 0; o < owners; o++) {
            w.install(o, rows / owners);
        }
        long after = settledHeap();
        double perRow = (after - before) / (double) rows;
        long charged = w.index.status().budgetBytesUsed();
        System.out.printf("rows=%d owners=%d heapDelta=%d bytes perRow=%.1f B chargedPerRow=%.1f B formula(32B key)=%d B%n",
                rows, owners, after - before, perRow, charged / (double) rows, RowCost.bytes(32));
        ContractVerdicts v = new ContractVerdicts("RowFootprintHarness", System.out::println);
        if (charged == 0) {
            v.collectionFailed("retained heap per index row", "≤ " + ROW_BYTES_MAX + " B", "nothing installed");
        } else {
            v.atMost(String.format(java.util.Locale.ROOT, "retained heap per index row, %,d rows, %d owners", rows, owners), ROW_BYTES_MAX, perRow,
                    " B", String.format(java.util.Locale.ROOT, "charged %.1f B per row, formula %d B", charged / (double) rows, RowCost.bytes(32)));
        }
        v.enforce(); // a FAIL ends the JVM with a non-zero status (issue 37 item 1)
    }

    /** The goal of retained heap per installed row at 1,000,000 rows. */
    static final double ROW_BYTES_MAX = 128;

    private static long settledHeap() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100); // let the collector finish concurrent work; a harness, not a test
            Runtime rt = Runtime.getRuntime();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }
}
