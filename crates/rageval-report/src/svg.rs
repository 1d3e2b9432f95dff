//! Charts as hand-written inline SVG: a histogram of one metric's scores and a
//! dot-and-whisker chart of means (or differences) with their intervals. No script and no
//! external file, so a report stays one self-contained page.

use std::fmt::Write as _;

use crate::escape::escape_html;

/// Bins of a histogram.
const BINS: usize = 10;

/// One row of an interval chart: a label, a point estimate and its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    pub label: String,
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// A small histogram of `values` (10 bins over [0, 1] when every value lies there, else over
/// the values' range). Empty values give an SVG that says so.
pub fn histogram(values: &[f64], width: u32, height: u32) -> String {
    let (w, h) = (f64::from(width), f64::from(height));
    let mut svg = format!(
        r#"<svg class="hist" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">"#
    );
    if values.is_empty() {
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle" class="muted">no scores</text></svg>"#,
            w / 2.0,
            h / 2.0 + 4.0
        );
        return svg;
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (low, high) = if min >= 0.0 && max <= 1.0 {
        (0.0, 1.0)
    } else if max > min {
        (min, max)
    } else {
        (min - 0.5, max + 0.5)
    };
    let mut counts = [0usize; BINS];
    for value in values {
        let position = ((value - low) / (high - low) * BINS as f64).floor();
        // The top edge belongs to the last bin.
        let bin = (position.max(0.0) as usize).min(BINS - 1);
        counts[bin] += 1;
    }
    let tallest = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let label_height = 12.0;
    let plot = h - label_height;
    let bar = w / BINS as f64;
    for (i, count) in counts.iter().enumerate() {
        let bar_height = (*count as f64 / tallest) * (plot - 2.0);
        let from = low + (high - low) * i as f64 / BINS as f64;
        let to = low + (high - low) * (i + 1) as f64 / BINS as f64;
        let _ = write!(
            svg,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" class="bar"><title>{from:.2}–{to:.2}: {count}</title></rect>"#,
            i as f64 * bar + 0.5,
            plot - bar_height,
            bar - 1.0,
            bar_height
        );
    }
    let _ = write!(
        svg,
        r#"<line x1="0" y1="{plot}" x2="{w}" y2="{plot}" class="axis"/><text x="0" y="{h}" class="tick">{low:.2}</text><text x="{w}" y="{h}" text-anchor="end" class="tick">{high:.2}</text></svg>"#
    );
    svg
}

/// Horizontal dot-and-whisker rows on one shared axis. With `zero_line`, the axis always
/// includes 0 and a line marks it (for differences between runs).
pub fn interval_chart(rows: &[IntervalRow], width: u32, zero_line: bool) -> String {
    let row_height = 22.0;
    let label_width = 170.0;
    let w = f64::from(width);
    let h = row_height * rows.len() as f64 + 18.0;
    let mut low = rows.iter().map(|r| r.low).fold(f64::INFINITY, f64::min);
    let mut high = rows
        .iter()
        .map(|r| r.high)
        .fold(f64::NEG_INFINITY, f64::max);
    if !low.is_finite() || !high.is_finite() {
        (low, high) = (0.0, 1.0);
    }
    if zero_line {
        // Differences that are all zero still get an axis a reader can place them on.
        let reach = low.abs().max(high.abs());
        let reach = if reach < 1e-6 { 0.1 } else { reach };
        (low, high) = (-reach, reach);
    } else if low >= 0.0 && high <= 1.0 {
        (low, high) = (0.0, 1.0);
    } else if high <= low {
        (low, high) = (low - 0.5, high + 0.5);
    }
    let plot_width = w - label_width - 10.0;
    let x = |v: f64| label_width + (v - low) / (high - low) * plot_width;
    let mut svg = format!(
        r#"<svg class="intervals" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" viewBox="0 0 {width} {h}" role="img">"#
    );
    if zero_line {
        let _ = write!(
            svg,
            r#"<line x1="{0:.1}" y1="0" x2="{0:.1}" y2="{1}" class="zero"/>"#,
            x(0.0),
            h - 16.0
        );
    }
    for (i, row) in rows.iter().enumerate() {
        let y = row_height * i as f64 + row_height / 2.0;
        let _ = write!(
            svg,
            r#"<g><title>{label}: {estimate:.4} [{lo:.4}, {hi:.4}]</title><text x="{tx}" y="{ty:.1}" text-anchor="end" class="label">{label}</text><line x1="{x1:.1}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}" class="whisker"/><circle cx="{cx:.1}" cy="{y:.1}" r="4" class="dot"/></g>"#,
            label = escape_html(&row.label),
            estimate = row.estimate,
            lo = row.low,
            hi = row.high,
            tx = label_width - 8.0,
            ty = y + 4.0,
            x1 = x(row.low),
            x2 = x(row.high),
            cx = x(row.estimate),
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{h}" class="tick">{low:.2}</text><text x="{:.1}" y="{h}" text-anchor="end" class="tick">{high:.2}</text></svg>"#,
        label_width,
        w - 10.0
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_land_in_their_bins() {
        let svg = histogram(&[0.0, 0.05, 1.0, 1.0, 0.55], 200, 60);
        assert!(svg.contains("<title>0.00–0.10: 2</title>"), "{svg}");
        assert!(svg.contains("<title>0.90–1.00: 2</title>"));
        assert!(svg.contains("<title>0.50–0.60: 1</title>"));
        assert_eq!(svg.matches("<rect").count(), BINS);
        assert!(histogram(&[], 200, 60).contains("no scores"));
        // One value outside [0, 1] gives a range around it rather than a division by zero.
        assert!(!histogram(&[3.0], 200, 60).contains("NaN"));
    }

    #[test]
    fn interval_labels_are_escaped_and_zero_is_centred() {
        let rows = [IntervalRow {
            label: "<b>m</b>".into(),
            estimate: 0.1,
            low: 0.05,
            high: 0.2,
        }];
        let svg = interval_chart(&rows, 400, true);
        assert!(svg.contains("&lt;b&gt;m&lt;/b&gt;"));
        assert!(!svg.contains("<b>"));
        // The axis is symmetric, so 0 sits in the middle of the plot area.
        assert!(svg.contains(r#"<line x1="280.0""#), "{svg}");
    }
}
