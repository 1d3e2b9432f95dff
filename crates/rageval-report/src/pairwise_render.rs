//! A `pairwise` run as people read it: `report.md` ([`render_pairwise_markdown`]) and
//! `report.html` ([`render_pairwise_html`], its body [`render_pairwise_body`] for `rageval
//! serve`) — the versions, the head-to-head table, the length-bias lines, Bradley–Terry
//! strengths, the questions that flipped with both reasons, the failed ones, the judge's
//! calls — built once as [`Block`]s, and one line per pair for a terminal
//! ([`pairwise_line`]).

use crate::blocks::{Block, Span, Table, to_html, to_markdown};
use crate::page::html_document;
use crate::pairwise::{PairVerdicts, PairwiseQuestion, PairwiseSummary, VersionPair};

/// Flipped questions shown per pair, at most.
pub const FLIPS_SHOWN: usize = 20;

pub(crate) fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "undefined".into(), |v| format!("{v:.3}"))
}

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "undefined".into(), |v| format!("{:.1}%", 100.0 * v))
}

pub(crate) fn interval(ci: Option<[f64; 2]>) -> String {
    ci.map_or_else(String::new, |[low, high]| format!(" [{low:.3}, {high:.3}]"))
}

fn p_value(p: Option<f64>) -> String {
    p.map_or_else(
        || "undefined (every question tied)".into(),
        |p| format!("{p:.3}"),
    )
}

/// One pair in one line: wins/ties/losses, the win rate with its interval, p, the reading
/// and the flip rate.
pub fn pairwise_line(pair: &VersionPair) -> String {
    let f = &pair.figures;
    let failed = if pair.failed > 0 {
        format!(", {} failed", pair.failed)
    } else {
        String::new()
    };
    format!(
        "{} vs {}: {} wins, {} ties, {} losses (n {}{failed}); win rate {}{}, sign test p {}; \
         {}; position flips {} of decisive questions",
        pair.a,
        pair.b,
        f.wins,
        f.ties,
        f.losses,
        f.n,
        number(f.win_rate),
        interval(f.win_rate_ci95),
        p_value(f.p_value),
        f.reading.words(&pair.a, &pair.b),
        percent(f.position.flip_rate),
    )
}

/// The length-bias line of one pair.
fn length_line(pair: &VersionPair) -> String {
    let length = &pair.figures.length;
    let held = &length.held_equal;
    let held_text = match (held.win_rate, &held.undefined) {
        (Some(rate), _) => format!("{rate:.3}{}", interval(held.ci95)),
        (None, Some(why)) => format!("undefined ({why})"),
        (None, None) => "undefined".into(),
    };
    format!(
        "{a} vs {b}: {a}'s win rate where its answer is longer {} ({} questions), where \
         {b}'s is {} ({} questions), same length {}; the longer answer won {}; {a}'s win \
         rate with length held equal (logistic fit on the log length ratio) {held_text}",
        number(length.a_longer.win_rate),
        length.a_longer.questions,
        number(length.b_longer.win_rate),
        length.b_longer.questions,
        length.same_length,
        percent(length.longer_win_rate),
        a = pair.a,
        b = pair.b,
    )
}

/// `report.md` of a `pairwise` run.
pub fn render_pairwise_markdown(
    summary: &PairwiseSummary,
    questions: &[PairwiseQuestion],
) -> String {
    let mut blocks = blocks(summary, questions);
    blocks.insert(0, Block::Title(title(summary)));
    to_markdown(&blocks)
}

/// `report.html` of a `pairwise` run: the same content as `report.md`, one page.
pub fn render_pairwise_html(summary: &PairwiseSummary, questions: &[PairwiseQuestion]) -> String {
    let title = title(summary);
    let body = to_html(&[Block::Title(title.clone())]) + &render_pairwise_body(summary, questions);
    html_document(&title, &body)
}

/// The HTML of a `pairwise` run without the page's shell and its title, for other pages
/// (`rageval serve`'s run page).
pub fn render_pairwise_body(summary: &PairwiseSummary, questions: &[PairwiseQuestion]) -> String {
    to_html(&blocks(summary, questions))
}

fn title(summary: &PairwiseSummary) -> String {
    let names: Vec<&str> = summary.versions.iter().map(|v| v.name.as_str()).collect();
    format!("Head to head: {}", names.join(" vs "))
}

/// The head-to-head table's columns (`#`: numeric).
const HEAD_TO_HEAD_COLUMNS: [&str; 13] = [
    "A",
    "B",
    "n",
    "wins",
    "ties",
    "losses",
    "failed",
    "win rate [95% CI]",
    "sign test p",
    "reading",
    "flips / decisive",
    "flips / all",
    "first-seat share",
];

/// Every block of the report but its title, in order.
fn blocks(summary: &PairwiseSummary, questions: &[PairwiseQuestion]) -> Vec<Block> {
    let mut blocks = vec![Block::Paragraph(vec![
        Span::Text(format!(
            "{} questions every version answered ({} with a reference answer the judge \
                 saw); criterion ",
            summary.questions, summary.with_reference
        )),
        Span::Code(summary.criterion.clone()),
        Span::Text(
            "; each pair asked in both seat orders, orders that disagree count as a tie.".into(),
        ),
    ])];
    let mut versions = Table::new(&["Version", "Source"], "");
    for version in &summary.versions {
        versions
            .rows
            .push(vec![version.name.clone(), version.source.clone()]);
    }
    blocks.push(Block::Table(versions));
    blocks.push(Block::Heading("Head to head".into()));
    let mut table = Table::new(&HEAD_TO_HEAD_COLUMNS, "  ######  ###");
    for pair in &summary.pairs {
        let f = &pair.figures;
        table.rows.push(vec![
            pair.a.clone(),
            pair.b.clone(),
            f.n.to_string(),
            f.wins.to_string(),
            f.ties.to_string(),
            f.losses.to_string(),
            pair.failed.to_string(),
            format!("{}{}", number(f.win_rate), interval(f.win_rate_ci95)),
            p_value(f.p_value),
            f.reading.words(&pair.a, &pair.b),
            percent(f.position.flip_rate),
            percent(f.position.flip_rate_all),
            percent(f.position.first_seat_share),
        ]);
    }
    blocks.push(Block::Table(table));
    blocks.push(Block::Heading("Length bias".into()));
    blocks.push(Block::Bullets(
        summary.pairs.iter().map(length_line).collect(),
    ));
    if !summary.strengths.is_empty() {
        blocks.push(Block::Heading("Bradley–Terry strengths".into()));
        let mut table = Table::new(&["Version", "log-strength [95% CI]"], " #");
        for strength in &summary.strengths {
            table.rows.push(vec![
                strength.name.clone(),
                format!("{:.3}{}", strength.strength, interval(strength.ci95)),
            ]);
        }
        blocks.push(Block::Table(table));
    }
    blocks.extend(flipped_section(summary, questions));
    blocks.extend(failed_section(summary, questions));
    blocks.push(Block::Heading("Judge".into()));
    blocks.push(Block::text(format!(
        "{} model calls ({} from the cache), {} prompt and {} completion tokens.",
        summary.judge.usage.total.calls,
        summary.judge.usage.total.cached_calls,
        summary.judge.usage.total.prompt_tokens,
        summary.judge.usage.total.completion_tokens
    )));
    blocks
}

/// The name of version `index`.
pub(crate) fn version_name(summary: &PairwiseSummary, index: usize) -> &str {
    summary.versions.get(index).map_or("?", |v| v.name.as_str())
}

fn flipped_section(summary: &PairwiseSummary, questions: &[PairwiseQuestion]) -> Vec<Block> {
    let heading = Block::Heading("Questions that flipped".into());
    let flips: Vec<(&PairwiseQuestion, &PairVerdicts)> = questions
        .iter()
        .flat_map(|q| q.pairs.iter().filter(|p| p.flipped).map(move |p| (q, p)))
        .collect();
    if flips.is_empty() {
        return vec![heading, Block::text("None: no verdict followed the seat.")];
    }
    let intro = Block::text(format!(
        "The two verdicts named opposite versions (the judge followed the seat, not the \
         answer): {} in all, the first {} shown.",
        flips.len(),
        flips.len().min(FLIPS_SHOWN)
    ));
    let mut table = Table::new(&["Question", "A", "B", "with A first", "with B first"], "");
    for (question, pair) in flips.into_iter().take(FLIPS_SHOWN) {
        table.rows.push(vec![
            question.question.clone(),
            version_name(summary, pair.a).to_owned(),
            version_name(summary, pair.b).to_owned(),
            pair.a_first.words().to_owned(),
            pair.b_first.words().to_owned(),
        ]);
    }
    vec![heading, intro, Block::Table(table)]
}

fn failed_section(summary: &PairwiseSummary, questions: &[PairwiseQuestion]) -> Vec<Block> {
    let failed: Vec<(&PairwiseQuestion, &PairVerdicts, &str)> = questions
        .iter()
        .flat_map(|q| {
            q.pairs
                .iter()
                .filter_map(move |p| p.error().map(|error| (q, p, error)))
        })
        .collect();
    if failed.is_empty() {
        return Vec::new();
    }
    let intro = Block::text(format!(
        "{} version pairs × questions whose calls failed, left out of the figures (run \
         again with --retry-failed):",
        failed.len()
    ));
    let mut table = Table::new(&["Question", "A", "B", "error"], "");
    for (question, pair, error) in failed.into_iter().take(FLIPS_SHOWN) {
        table.rows.push(vec![
            question.question.clone(),
            version_name(summary, pair.a).to_owned(),
            version_name(summary, pair.b).to_owned(),
            error.to_owned(),
        ]);
    }
    vec![Block::Heading("Failed".into()), intro, Block::Table(table)]
}
