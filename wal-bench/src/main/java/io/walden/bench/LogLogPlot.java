package io.walden.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleUnaryOperator;

/** A log-log line plot as SVG, for the benchmark report: rates against client counts, one line per series. */
final class LogLogPlot {
    /** One line: its label, colour, dash style (0 solid, 1 dashed, 2 dotted) and points {x, y}. */
    record Series(String label, String colour, int dash, List<double[]> points) {
    }

    private final String xLabel;
    private final String yLabel;
    private final double minX;
    private final double maxX;
    private final double minY;
    private final double maxY;
    private final List<Series> series = new ArrayList<>();

    LogLogPlot(String xLabel, String yLabel, double minX, double maxX, double minY, double maxY) {
        this.xLabel = xLabel;
        this.yLabel = yLabel;
        this.minX = minX;
        this.maxX = maxX;
        this.minY = minY;
        this.maxY = maxY;
    }

    LogLogPlot add(String label, String colour, int dash, List<double[]> points) {
        series.add(new Series(label, colour, dash, points));
        return this;
    }

    String svg() {
        int width = 640;
        int height = 420;
        int left = 70;
        int bottom = 50;
        int top = 20;
        int right = 190;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", width, height));
        DoubleUnaryOperator sx = x -> left + (Math.log10(x) - Math.log10(minX))
                / (Math.log10(maxX) - Math.log10(minX)) * (width - left - right);
        DoubleUnaryOperator sy = y -> height - bottom - (Math.log10(Math.max(y, minY)) - Math.log10(minY))
                / (Math.log10(maxY) - Math.log10(minY)) * (height - top - bottom);
        for (double x = minX; x <= maxX; x *= 4) {
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                    + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>%n", sx.applyAsDouble(x), top,
                    sx.applyAsDouble(x), height - bottom, sx.applyAsDouble(x), height - bottom + 16, x));
        }
        for (double y = minY; y <= maxY; y *= 10) {
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", left, sy.applyAsDouble(y), width - right,
                    sy.applyAsDouble(y), left - 6, sy.applyAsDouble(y) + 4,
                    y >= 1e6 ? (long) (y / 1e6) + "M" : y >= 1e3 ? (long) (y / 1e3) + "k" : Long.toString((long) y)));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                left + (width - left - right) / 2, height - 12, xLabel));
        svg.append(String.format(Locale.ROOT, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">"
                + "%s</text>%n", top + (height - top - bottom) / 2, top + (height - top - bottom) / 2, yLabel));
        int legendY = top + 10;
        for (Series s : series) {
            line(svg, s, sx, sy, width - right + 10, legendY);
            legendY += 20;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static void line(StringBuilder svg, Series s, DoubleUnaryOperator sx, DoubleUnaryOperator sy, int lx, int ly) {
        if (s.points().isEmpty()) {
            return;
        }
        StringBuilder path = new StringBuilder();
        for (double[] p : s.points()) {
            path.append(path.length() == 0 ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f",
                    sx.applyAsDouble(p[0]), sy.applyAsDouble(p[1])));
        }
        String dashes = s.dash() == 0 ? "" : s.dash() == 1 ? " stroke-dasharray=\"6 3\"" : " stroke-dasharray=\"2 3\"";
        svg.append(String.format(Locale.ROOT, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
                path, s.colour(), dashes));
        for (double[] p : s.points()) {
            svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n",
                    sx.applyAsDouble(p[0]), sy.applyAsDouble(p[1]), s.colour()));
        }
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                + "<text x=\"%d\" y=\"%d\">%s</text>%n", lx, ly, lx + 20, ly, s.colour(), dashes, lx + 24, ly + 4, s.label()));
    }
}
