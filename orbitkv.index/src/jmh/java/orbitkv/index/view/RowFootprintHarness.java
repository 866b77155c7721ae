package orbitkv.index.view;

/**
 * Measures retained heap per installed row at 1,000,000 rows (goal <= 128 B) and compares it with the
 * budget formula {@link RowCost}. Heap used after repeated full GCs, before and after populating.
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
        if (w.index.status().budgetBytesUsed() == 0) {
            throw new IllegalStateException("nothing installed");
        }
    }

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
