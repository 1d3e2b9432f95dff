//! The shell every HTML page shares — the report, the comparison page and `rageval serve`'s
//! pages: one inline style sheet, no script, no font and nothing fetched from elsewhere — and
//! the number formats they all use.

use crate::escape::escape_html as e;

/// The one style sheet, inlined into every page.
const STYLE: &str = r#"
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#fff; --soft:#f6f7f9; --accent:#3559c7; --bad:#b42318; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 1200px; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 32px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; } h4 { font-size: 13px; margin: 12px 0 4px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.muted, .tick { color: var(--muted); fill: var(--muted); font-size: 11px; }
.meta td:first-child { color: var(--muted); width: 160px; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.bar { fill: var(--accent); opacity: .8; } .axis, .zero { stroke: var(--muted); stroke-width: 1; } .zero { stroke-dasharray: 3 3; }
.whisker { stroke: var(--fg); stroke-width: 2; } .dot { fill: var(--accent); } .label { font-size: 12px; fill: var(--fg); }
.cell-undefined { color: var(--muted); } .cell-failed { color: var(--bad); font-weight: 600; }
details.sample { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 6px 12px; }
details.sample > summary { cursor: pointer; } details.sample:target { border-color: var(--accent); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); padding: 6px 8px; border-radius: 4px; margin: 2px 0 8px; }
ol.contexts li { margin-bottom: 6px; } blockquote { margin: 4px 0 4px 12px; padding-left: 8px; border-left: 3px solid var(--line); color: var(--muted); white-space: pre-wrap; }
.outcome { margin: 10px 0; } .reason { color: var(--bad); }
.good { color: #067647; } .bad { color: var(--bad); } .neutral { color: var(--muted); }
nav.top { display: flex; gap: 16px; align-items: baseline; border-bottom: 1px solid var(--line); padding-bottom: 8px; margin-bottom: 16px; } nav.top a { color: var(--accent); text-decoration: none; } nav.top .here { color: var(--muted); }
form.inline { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; background: var(--soft); padding: 8px 12px; border-radius: 6px; margin: 8px 0; }
input, select, button { font: inherit; padding: 3px 6px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); } input[type=number] { width: 90px; }
a { color: var(--accent); } .nowrap { white-space: nowrap; } .wide { overflow-x: auto; }
.chips { line-height: 1.9; } .chip { display: inline-block; white-space: nowrap; background: var(--soft); border-radius: 4px; padding: 0 6px; margin: 0 2px 2px 0; font-variant-numeric: tabular-nums; }
button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; } .error { border: 1px solid var(--bad); border-radius: 6px; padding: 8px 12px; color: var(--bad); }
"#;

/// A complete HTML document titled `title` around `body` (already HTML), with the shared
/// style sheet inline.
pub fn html_document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        e(title)
    )
}

/// At most `limit` characters, with `…` when cut.
pub(crate) fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_string()
    } else {
        text.chars().take(limit).chain(['…']).collect()
    }
}

/// A mean or score with four decimals, or `—` when there is none.
pub(crate) fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.4}"))
}
