//! `rageval search INDEX "query" -k 5`: the best chunks of a local index, as a table or JSON
//! lines.

use std::io::Write;

use rageval_sources::LocalIndex;
use serde_json::json;

use super::Exit;
use super::sources::{embedder_for, ranking, runtime};
use crate::cli::SearchArgs;
use crate::ui::Ui;

/// Characters of each hit's text shown in the table.
const PREVIEW_CHARS: usize = 120;

pub fn run(args: &SearchArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let index = LocalIndex::open(&args.index)?;
    let ranking = ranking(args.ranking);
    let embedder = embedder_for(&index, ranking)?;
    let hits =
        runtime()?.block_on(index.search(&args.query, args.k, ranking, embedder.as_ref()))?;
    for (rank, hit) in hits.iter().enumerate() {
        let lines = &hit.fields["lines"];
        if args.json {
            let line = json!({
                "rank": rank + 1,
                "id": hit.id,
                "score": hit.score,
                "source": hit.fields["source"],
                "lines": lines,
                "text": hit.text,
            });
            writeln!(out, "{line}")?;
        } else {
            let preview: String = hit
                .text
                .chars()
                .take(PREVIEW_CHARS)
                .map(|c| if c.is_whitespace() { ' ' } else { c })
                .collect();
            writeln!(
                out,
                "{:>2}. {:.4}  {}  (lines {}-{})\n    {preview}",
                rank + 1,
                hit.score.unwrap_or(0.0),
                hit.id,
                lines["from"],
                lines["to"],
            )?;
        }
    }
    if hits.is_empty() {
        ui.note("no chunk matches the query");
    }
    Ok(Exit::Success)
}
