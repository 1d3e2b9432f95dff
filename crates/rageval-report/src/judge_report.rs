//! The "Judge" section of `report.html` and `report.md`: who judged the run, and what it
//! asked of them over every session — calls, cache hits, merged duplicates, tokens, cost,
//! where structured answers ended on the parse ladder (with the parse-failure rate), and
//! which implementation answered each task. Numbers are shown as `summary.json` holds them.

use std::fmt::Write as _;

use serde_json::Value;

use crate::escape::{escape_html as e, escape_markdown_cell as cell};
use crate::{CallTally, JudgeAccount, JudgeModel, JudgeUsage};

/// Cost cells: dollars with six decimals (judge calls cost fractions of a cent), or `—`
/// when a model had no price.
pub(crate) fn cost(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |usd| format!("{usd:.6}"))
}

/// The parse-failure rate of `tally` as a percentage with one decimal, or `—`.
fn failure_rate(tally: &CallTally) -> String {
    tally
        .rungs
        .parse_failure_rate()
        .map_or_else(|| "—".into(), |rate| format!("{:.1}%", rate * 100.0))
}

fn model_line(model: &JudgeModel) -> String {
    match model.price {
        Some(price) => format!(
            "{} (${} / ${} per million prompt / completion tokens)",
            model.model, price.prompt_per_million, price.completion_per_million
        ),
        None => format!("{} (no price known: its cost is not counted)", model.model),
    }
}

fn kind_line(account: &JudgeAccount) -> &'static str {
    match account.kind.as_str() {
        "endpoint" => "a model behind an OpenAI-compatible endpoint",
        "local" => "a local GGUF chat model (llama.cpp) for every task",
        "heuristic" => "the heuristic judge alone, no model",
        "offline" => {
            "offline: the heuristic judge for verdicts, the embedded models for writing and \
             embeddings"
        }
        "checker" => {
            "a checker model (`--judge checker:DIR`) for support verdicts; the heuristic \
             judge and the embedded models for the rest"
        }
        "cascade" => {
            "a cascade: a checker model scores every claim's support and escalates those inside \
             its band to the chat model, which answers every other task"
        }
        _ => "unknown",
    }
}

fn sessions_line(account: &JudgeAccount) -> String {
    if account.sessions > 1 {
        format!(
            "{} (the run was resumed; the numbers add up every session's own calls)",
            account.sessions
        )
    } else {
        account.sessions.to_string()
    }
}

/// The numbers of one row, in the column order of both tables.
fn row_cells(t: &CallTally) -> [String; 13] {
    let r = &t.rungs;
    [
        t.calls.to_string(),
        t.cached_calls.to_string(),
        t.merged_calls.to_string(),
        t.prompt_tokens.to_string(),
        t.completion_tokens.to_string(),
        cost(t.cost_usd),
        r.direct.to_string(),
        r.extracted.to_string(),
        r.repaired.to_string(),
        r.reasked.to_string(),
        r.failed.to_string(),
        r.errored.to_string(),
        failure_rate(t),
    ]
}

const COLUMNS: [&str; 13] = [
    "calls",
    "cached",
    "merged",
    "prompt tokens",
    "completion tokens",
    "cost (USD)",
    "direct",
    "extracted",
    "repaired",
    "re-asked",
    "failed",
    "errored",
    "parse failures",
];

/// The checker model that answered support verdicts, as the manifest's `settings.judge`
/// records it: its folder's name, family, head and weights' hash, its agreement (none is
/// kept for it: unmeasured), and a cascade's band. `None` without a checker.
fn checker_fact(settings: &Value) -> Option<String> {
    let judge = &settings["judge"];
    let checker = judge["checker"].as_object()?;
    let text = |key: &str| checker.get(key).and_then(Value::as_str).unwrap_or("?");
    let sha = text("sha256");
    let mut fact = format!(
        "{} ({} family, {} head, weights SHA-256 {}…); agreement unmeasured until judge-check \
         runs on labelled data",
        text("model"),
        text("family"),
        text("head"),
        sha.get(..12).unwrap_or(sha)
    );
    if let (Some(low), Some(high)) = (
        judge["escalation"]["low"].as_f64(),
        judge["escalation"]["high"].as_f64(),
    ) {
        fact.push_str(&format!(
            "; claims it scores within {low},{high} are escalated to the chat model"
        ));
    }
    Some(fact)
}

/// The section as HTML; `settings` are the manifest's (they name a checker model).
pub(crate) fn judge_html(account: Option<&JudgeAccount>, settings: &Value) -> String {
    let mut html = String::from("<h2 id=\"judge\">Judge</h2>\n");
    let Some(account) = account else {
        html.push_str(
            "<p class=\"muted\">This run holds no judge accounts (it was written before \
             rageval kept them).</p>\n",
        );
        return html;
    };
    let usage = &account.usage;
    let mut facts = vec![("judge", kind_line(account).to_owned())];
    if let Some(checker) = checker_fact(settings) {
        facts.push(("checker model", checker));
    }
    for model in &account.models {
        facts.push((
            if model.role == "embedding" {
                "embedding model"
            } else {
                "chat model"
            },
            model_line(model),
        ));
    }
    if !account.endpoints.is_empty() {
        facts.push(("endpoints", account.endpoints.join(", ")));
    }
    facts.push(("sessions", sessions_line(account)));
    facts.push((
        "requests",
        format!(
            "{} attempts, {} failed, {} retries",
            usage.attempts, usage.failed_attempts, usage.retries
        ),
    ));
    html.push_str("<table class=\"meta judge-facts\">\n");
    for (key, value) in facts {
        let _ = writeln!(html, "<tr><td>{key}</td><td>{}</td></tr>", e(&value));
    }
    html.push_str(
        "</table>\n<div class=\"wide\"><table class=\"judge\"><thead><tr><th>prompt template</th>",
    );
    for column in COLUMNS {
        let _ = write!(html, "<th class=\"num\">{column}</th>");
    }
    html.push_str("</tr></thead><tbody>\n");
    let rows = usage
        .templates
        .iter()
        .map(|(name, tally)| (format!("<code>{}</code>", e(name)), tally))
        .chain([("<strong>total</strong>".to_owned(), &usage.total)]);
    for (label, tally) in rows {
        let _ = write!(html, "<tr><td>{label}</td>");
        for value in row_cells(tally) {
            let _ = write!(html, "<td class=\"num\">{value}</td>");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    html.push_str(
        "<p class=\"muted\">calls: requests the model answered (a re-ask is one more); cached: \
         answers from the answer cache, free now; merged: answers shared with an identical \
         request in flight. Ladder columns count structured answers by where they ended; parse \
         failures = failed ÷ all of them.</p>\n",
    );
    if let Some(line) = cascade_line(usage) {
        let _ = writeln!(html, "<p class=\"cascade\">{}</p>", e(&line));
    }
    if !usage.tasks.is_empty() {
        html.push_str(
            "<table class=\"judge-tasks\"><thead><tr><th>task</th><th class=\"num\">chat model\
             </th><th class=\"num\">checker model</th><th class=\"num\">heuristic judge</th>\
             </tr></thead><tbody>\n",
        );
        for (task, calls) in &usage.tasks {
            let _ = writeln!(
                html,
                "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td></tr>",
                e(task),
                calls.llm,
                calls.checker,
                calls.heuristic
            );
        }
        html.push_str("</tbody></table>\n");
    }
    html
}

/// What a cascade's tiers settled: the claims each tier judged, with its share, and each
/// tier's agreement (unmeasured: no figure is measured for a checker or a chat model until
/// `judge-check` runs on labelled data). `None` when no cascade judged the run. The one
/// wording of every report: Markdown, HTML and the workbook's summary sheet.
pub fn cascade_line(usage: &JudgeUsage) -> Option<String> {
    let (by_checker, by_chat) = usage.cascade_claims();
    let total = by_checker + by_chat;
    (total > 0).then(|| {
        format!(
            "cascade: of {total} claims, {by_checker} settled by the checker model ({}) and \
             {by_chat} escalated to the chat model ({}); agreement of each tier: unmeasured \
             until judge-check runs on labelled data",
            share(by_checker, total),
            share(by_chat, total)
        )
    })
}

/// `count` of `total` as a percentage with one decimal.
fn share(count: u64, total: u64) -> String {
    if total == 0 {
        return "-".into();
    }
    format!("{:.1}%", count as f64 * 100.0 / total as f64)
}

/// The section as Markdown; `settings` are the manifest's (they name a checker model).
pub(crate) fn judge_markdown(account: Option<&JudgeAccount>, settings: &Value) -> String {
    let mut md = String::from("\n## Judge\n\n");
    let Some(account) = account else {
        md.push_str(
            "This run holds no judge accounts (it was written before rageval kept them).\n",
        );
        return md;
    };
    let usage = &account.usage;
    let _ = writeln!(md, "- judge: {}", kind_line(account));
    if let Some(checker) = checker_fact(settings) {
        let _ = writeln!(md, "- checker model: {}", cell(&checker));
    }
    for model in &account.models {
        let _ = writeln!(md, "- {} model: {}", model.role, cell(&model_line(model)));
    }
    if !account.endpoints.is_empty() {
        let _ = writeln!(md, "- endpoints: {}", cell(&account.endpoints.join(", ")));
    }
    let _ = writeln!(md, "- sessions: {}", sessions_line(account));
    let _ = writeln!(
        md,
        "- requests: {} attempts, {} failed, {} retries\n",
        usage.attempts, usage.failed_attempts, usage.retries
    );
    md.push_str("| prompt template |");
    for column in COLUMNS {
        let _ = write!(md, " {column} |");
    }
    md.push_str("\n|---|");
    md.push_str(&"---:|".repeat(COLUMNS.len()));
    md.push('\n');
    let rows = usage
        .templates
        .iter()
        .map(|(name, tally)| (format!("`{}`", cell(name)), tally))
        .chain([("**total**".to_owned(), &usage.total)]);
    for (label, tally) in rows {
        let _ = write!(md, "| {label} |");
        for value in row_cells(tally) {
            let _ = write!(md, " {value} |");
        }
        md.push('\n');
    }
    if let Some(line) = cascade_line(usage) {
        let _ = writeln!(md, "\n- {line}");
    }
    if !usage.tasks.is_empty() {
        md.push_str(
            "\n| task | chat model | checker model | heuristic judge |\n|---|---:|---:|---:|\n",
        );
        for (task, calls) in &usage.tasks {
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | {} |",
                cell(task),
                calls.llm,
                calls.checker,
                calls.heuristic
            );
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JudgeUsage, ModelPrice, RungTally, Session, SessionEnd, TaskTally};

    fn account() -> JudgeAccount {
        let tally = CallTally {
            calls: 4,
            cached_calls: 1,
            prompt_tokens: 1200,
            completion_tokens: 80,
            cost_usd: Some(0.000228),
            rungs: RungTally {
                direct: 3,
                failed: 1,
                ..RungTally::default()
            },
            ..CallTally::default()
        };
        let mut judge = JudgeUsage {
            total: tally.clone(),
            ..JudgeUsage::default()
        };
        judge
            .templates
            .insert("support_verdicts.en@1".into(), tally);
        judge.tasks.insert(
            "support_verdicts".into(),
            TaskTally {
                llm: 4,
                heuristic: 0,
                checker: 0,
                ..TaskTally::default()
            },
        );
        let session = Session {
            started_at: "s".into(),
            finished_at: "f".into(),
            ended: SessionEnd::Complete,
            reason: None,
            cells: 4,
            judge,
        };
        JudgeAccount::over_sessions(
            "endpoint",
            vec![JudgeModel {
                role: "chat".into(),
                model: "gpt-4o-mini".into(),
                price: Some(ModelPrice {
                    prompt_per_million: 0.15,
                    completion_per_million: 0.6,
                }),
            }],
            vec!["http://127.0.0.1:9/v1".into()],
            &[session.clone(), session],
        )
    }

    #[test]
    fn both_sections_show_the_summed_numbers() {
        let account = account();
        let html = judge_html(Some(&account), &Value::Null);
        assert!(
            html.contains("<td class=\"num\">8</td><td class=\"num\">2</td>"),
            "{html}"
        );
        assert!(
            html.contains("0.000456") && html.contains("25.0%"),
            "{html}"
        );
        assert!(html.contains("2 (the run was resumed"), "{html}");
        let md = judge_markdown(Some(&account), &Value::Null);
        assert!(
            md.contains(
                "| **total** | 8 | 2 | 0 | 2400 | 160 | 0.000456 | 6 | 0 | 0 | 0 | 2 | 0 | 25.0% |"
            ),
            "{md}"
        );
        assert!(md.contains("| `support_verdicts` | 8 | 0 | 0 |"), "{md}");
        assert!(judge_html(None, &Value::Null).contains("no judge accounts"));
        assert!(judge_markdown(None, &Value::Null).contains("no judge accounts"));
    }
}
