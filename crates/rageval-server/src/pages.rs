//! The HTML pages, rendered on the server in the report's style (its shell and pieces come
//! from `rageval-report`): no script, nothing loaded from elsewhere, forms that submit with
//! `GET` so every view is a link.
//!
//! - `/`: the runs, with their kind and figures (a scored run's means, a `judge-check`
//!   run's agreement, a `rank` run's and a pipeline's retriever-versus-judge figures, a
//!   `rank`, `reference` or `testset` run's counts), and a form to compare the ticked ones;
//! - `/runs/{name}`: a scored run's summary (led by a `judge-check` run's agreement with
//!   its labels; a `rank` / `pipeline` run's retriever-versus-judge figures after it) and
//!   its samples, filtered by a metric's range or status; a stage run's facts and figures;
//! - `/runs/{name}/report`: the run's `report.html` as `rageval eval` wrote it (rendered
//!   from the run, without texts, when the file is missing);
//! - `/compare?run=A&run=B…`: the version table and paired differences, samples paired by
//!   id and question (`&common=1`: only the questions every run holds; `&min_overlap=X`).

use std::fmt::Write as _;

use axum::extract::{Path, RawQuery, State};
use axum::http::Uri;
use axum::response::{Html, IntoResponse, Response};
use rageval_report::{
    AnyRun, PairwiseSummary, RankAgreementSummary, RunData, StageData, compare_title,
    escape_html as e, html_document, rank_figure_label, render_agreement, render_compare_body,
    render_html, render_pairwise_body, render_rank_agreement, render_run_summary,
    render_sample_table,
};
use serde::Deserialize as _;
use serde_json::Value;

use crate::compare::CompareRequest;
use crate::limits::MAX_SAMPLES_PER_PAGE;
use crate::public::{public_run, public_stage, shown_path, without_paths};
use crate::query::QueryParams;
use crate::runs::{RunEntry, RunState, error_chain};
use crate::{AppState, SampleFilter, ServerError, StatusFilter};

/// A [`ServerError`] answered as an HTML page.
#[derive(Debug)]
pub(crate) struct PageError(ServerError);

impl From<ServerError> for PageError {
    fn from(error: ServerError) -> Self {
        Self(error)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = self.0.status();
        let body = format!(
            "<h1>{}</h1>\n<p class=\"error\">{}</p>\n<p><a href=\"/\">all runs</a></p>\n",
            status.as_u16(),
            e(&error_chain(&self.0))
        );
        self.0
            .answer(page("rageval: error", &[], &body).into_response())
    }
}

/// A page with the navigation bar: `rageval · runs / crumb / crumb`.
fn page(title: &str, crumbs: &[(String, Option<String>)], body: &str) -> Html<String> {
    let mut nav = String::from("<nav class=\"top\"><a href=\"/\"><b>rageval</b></a>");
    nav.push_str("<a href=\"/\">runs</a>");
    for (label, link) in crumbs {
        match link {
            Some(href) => {
                let _ = write!(nav, "<a href=\"{}\">{}</a>", e(href), e(label));
            }
            None => {
                let _ = write!(nav, "<span class=\"here\">{}</span>", e(label));
            }
        }
    }
    nav.push_str("</nav>\n");
    Html(html_document(title, &format!("{nav}{body}")))
}

/// A run name as one URL path segment: every byte but the unreserved ones percent-encoded.
fn segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// `name=value` for a URL's query.
fn query_pair(name: &str, value: &str) -> String {
    form_urlencoded::Serializer::new(String::new())
        .append_pair(name, value)
        .finish()
}

fn mean(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| format!("{v:.4}"))
}

pub(crate) async fn index(State(state): State<AppState>) -> Result<Html<String>, PageError> {
    let entries = state.read(|runs| runs.list()).await?;
    let root = state.runs().path();
    let root_name = root
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let mut body = format!(
        "<h1>Runs</h1>\n<p class=\"muted\">{} in <code>{}</code> · JSON: \
         <a href=\"/api/runs\">/api/runs</a></p>\n",
        match entries.len() {
            1 => "1 run".to_string(),
            n => format!("{n} runs"),
        },
        e(&root_name)
    );
    if entries.is_empty() {
        body.push_str(
            "<p>No runs here yet: <code>rageval eval DATA --out DIR/NAME</code> writes one \
             into this directory.</p>\n",
        );
        return Ok(page("rageval: runs", &[], &body));
    }
    body.push_str(
        "<form action=\"/compare\" method=\"get\">\n<table class=\"runs\"><thead><tr>\
         <th>compare</th><th>run</th><th>status</th><th>dataset</th><th class=\"num\">samples</th>\
         <th>finished</th><th>means</th></tr></thead><tbody>\n",
    );
    for entry in &entries {
        body.push_str(&run_row(entry));
    }
    body.push_str(
        "</tbody></table>\n<p><button type=\"submit\">Compare the ticked runs</button> \
         <label><input type=\"checkbox\" name=\"common\" value=\"1\"> only the questions \
         every run holds</label> <span class=\"muted\">Runs compare question by question: \
         system versions over the same questions, their datasets differing in contexts and \
         answers. The first ticked run is the baseline.</span></p>\n</form>\n",
    );
    Ok(page("rageval: runs", &[], &body))
}

fn run_row(entry: &RunEntry) -> String {
    let name = e(&entry.name);
    let link = format!("<a href=\"/runs/{}\">{name}</a>", e(&segment(&entry.name)));
    let kind = format!(" <span class=\"muted\">{}</span>", e(&entry.kind));
    let (tick, run, status, mut figures) = match &entry.state {
        RunState::Complete(summary) => {
            let means: Vec<String> = summary
                .metric_order
                .iter()
                .filter_map(|metric| {
                    let m = summary.metrics.get(metric)?;
                    Some(format!(
                        "<span class=\"chip\"><code>{}</code> {}</span>",
                        e(metric),
                        mean(m.mean)
                    ))
                })
                .collect();
            (
                format!(
                    "<input type=\"checkbox\" name=\"run\" value=\"{name}\" aria-label=\"compare {name}\">"
                ),
                link,
                format!("complete{kind}"),
                means.join(" "),
            )
        }
        // A `rank`, `reference` or `testset` run has no samples to compare: its figures
        // are the row's, its page its facts.
        RunState::Finished(stage) => (
            String::new(),
            link,
            format!("complete{kind}"),
            format!("<span class=\"chip\">{}</span>", e(&stage.describe())),
        ),
        RunState::Running => {
            let stages = if entry.stages.is_empty() {
                String::new()
            } else {
                format!(
                    " <span class=\"muted\">(stages started: {})</span>",
                    e(&entry.stages.join(", "))
                )
            };
            (
                String::new(),
                name.clone(),
                format!("<span class=\"muted\">running or stopped</span>{kind}{stages}"),
                String::new(),
            )
        }
        RunState::Unreadable(why) => (
            String::new(),
            name.clone(),
            format!("<span class=\"bad\">unreadable</span>: {}", e(why)),
            String::new(),
        ),
    };
    if let Some(agreement) = &entry.agreement {
        for (figure, value) in agreement {
            let _ = write!(
                figures,
                " <span class=\"chip\">{} {:.4}</span>",
                e(figure),
                value.value
            );
        }
    }
    if let Some(agreement) = &entry.rank_agreement {
        figures.push_str(&rank_chips(agreement));
    }
    let manifest = entry.manifest.as_ref();
    let dataset = manifest.map_or_else(String::new, |m| {
        let shown = shown_path(&m.dataset.path);
        let file = std::path::Path::new(&shown)
            .file_name()
            .map_or_else(|| shown.clone(), |f| f.to_string_lossy().into_owned());
        let short: String = m.dataset.sha256.chars().take(12).collect();
        format!(
            "<span title=\"{}\"><code>{}</code></span> <span class=\"muted\" title=\"sha256 {}\">{}</span>",
            e(&shown),
            e(&file),
            e(&m.dataset.sha256),
            e(&short)
        )
    });
    let samples = manifest
        .and_then(|m| m.dataset.samples)
        .map_or_else(String::new, |n| n.to_string());
    let finished = manifest
        .and_then(|m| m.finished_at.clone())
        .unwrap_or_default();
    format!(
        "<tr><td>{tick}</td><td class=\"nowrap\">{run}</td><td>{status}</td><td>{dataset}</td>\
         <td class=\"num\">{samples}</td><td class=\"nowrap\">{}</td><td class=\"chips\">{figures}</td></tr>\n",
        e(&finished)
    )
}

/// A run's retriever-versus-judge means as chips, with the questions they are over.
fn rank_chips(agreement: &RankAgreementSummary) -> String {
    let mut chips = String::from(" ");
    for (figure, value) in &agreement.figures {
        let _ = write!(
            chips,
            "<span class=\"chip\">{} {}</span> ",
            e(rank_figure_label(figure)),
            mean(value.mean)
        );
    }
    let k: Vec<String> = agreement.k.iter().map(usize::to_string).collect();
    let _ = write!(
        chips,
        "<span class=\"muted\">retriever vs judge, {} questions, k = {}</span>",
        agreement.questions,
        k.join(", ")
    );
    chips
}

pub(crate) async fn run(
    State(state): State<AppState>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Html<String>, PageError> {
    let filter = SampleFilter::from_query(&QueryParams::parse(query.as_deref()))?;
    let wanted = filter.clone();
    let (run, shown) = state
        .read(move |runs| match runs.open_run(&name)? {
            AnyRun::Scored(run) => {
                let shown = wanted.select(&run)?;
                Ok((AnyRun::Scored(run), shown))
            }
            stage @ AnyRun::Stage(_) => Ok((stage, Vec::new())),
        })
        .await?;
    match run {
        AnyRun::Scored(mut run) => {
            public_run(&mut run);
            Ok(scored_page(&run, &shown, &filter, query.as_deref()))
        }
        AnyRun::Stage(mut run) => {
            public_stage(&mut run);
            Ok(stage_page(&run))
        }
    }
}

/// A scored run's page: its summary and its samples as `filter` chose them (`shown`).
fn scored_page(
    run: &RunData,
    shown: &[usize],
    filter: &SampleFilter,
    query: Option<&str>,
) -> Html<String> {
    let name = run.name();
    let base = format!("/runs/{}", segment(&name));
    let api_samples = match query {
        Some(q) if !q.is_empty() => format!("/api{base}/samples?{q}"),
        _ => format!("/api{base}/samples"),
    };
    let mut body = format!(
        "<h1>{}</h1>\n<p class=\"muted\"><a href=\"{base}/report\">the full report</a> (every \
         verdict with its reason and the contexts it cites) · JSON: \
         <a href=\"/api{base}\">summary</a>, <a href=\"{}\">samples</a></p>\n",
        e(&name),
        e(&api_samples)
    );
    body.push_str(&render_agreement(run, &format!("{base}/report")));
    body.push_str(&render_run_summary(run));
    body.push_str(&render_rank_agreement(run, &format!("{base}/report")));
    body.push_str("<h2 id=\"samples\">Samples</h2>\n");
    body.push_str(&filter_form(&base, &run.metric_names(), filter));
    let total = run.sample_ids().len();
    let _ = writeln!(
        body,
        "<p class=\"count\"><b>{}</b> of {total} samples: {}</p>",
        shown.len(),
        e(&filter.describe())
    );
    body.push_str(&render_sample_table(
        run,
        &[],
        &shown[..shown.len().min(MAX_SAMPLES_PER_PAGE)],
        &format!("{base}/report"),
    ));
    if shown.len() > MAX_SAMPLES_PER_PAGE {
        let _ = writeln!(
            body,
            "<p class=\"muted\">The first {MAX_SAMPLES_PER_PAGE} are shown: narrow the filter, \
             or page through <a href=\"{}\">the API</a> with offset and limit.</p>",
            e(&api_samples)
        );
    }
    let crumbs = [(name.clone(), None)];
    page(&format!("rageval: {name}"), &crumbs, &body)
}

/// A `rank`, `reference`, `testset` or `pairwise` run's page: what ran, on which data, and
/// its figures (a rank run's retriever-versus-judge means among them; a pairwise run's
/// head-to-head table, length bias and the questions that flipped with both reasons).
fn stage_page(run: &StageData) -> Html<String> {
    let name = &run.name;
    let m = &run.manifest;
    let mut body = format!(
        "<h1>{}</h1>\n<p class=\"muted\">a <code>{}</code> run: figures per question, no \
         per-sample scores to filter or compare · JSON: <a href=\"/api/runs/{}\">summary</a></p>\n",
        e(name),
        e(&m.command),
        e(&segment(name))
    );
    let mut facts = vec![
        ("dataset".to_string(), shown_path(&m.dataset.path)),
        ("dataset sha256".into(), m.dataset.sha256.clone()),
        ("command".into(), m.command.clone()),
        ("tool".into(), format!("{} {}", m.tool.name, m.tool.version)),
        ("started".into(), m.started_at.clone()),
        ("finished".into(), m.finished_at.clone().unwrap_or_default()),
        ("figures".into(), run.figures.describe()),
    ];
    if let Ok(Value::Object(figures)) = serde_json::to_value(&run.figures) {
        for (key, value) in figures {
            match value {
                Value::Object(parts) => facts.extend(
                    parts
                        .into_iter()
                        .map(|(part, count)| (format!("{key}: {part}"), count.to_string())),
                ),
                other => facts.push((key, other.to_string())),
            }
        }
    }
    body.push_str("<table class=\"meta\">\n");
    for (key, value) in facts {
        let _ = writeln!(body, "<tr><td>{}</td><td>{}</td></tr>", e(&key), e(&value));
    }
    body.push_str("</table>\n");
    if let Some(rows) = &run.rank_agreement {
        let _ = writeln!(
            body,
            "<h2>Retriever versus judge</h2>\n<p class=\"chips\">{}</p>",
            rank_chips(&RankAgreementSummary::of(rows))
        );
    }
    // A pairwise run: its report's head-to-head table and the questions that flipped.
    let pairwise = PairwiseSummary::deserialize(&run.summary).ok();
    if let Some((summary, questions)) = pairwise.zip(run.pairwise_questions.as_ref()) {
        body.push_str(&render_pairwise_body(&summary, questions));
    }
    page(&format!("rageval: {name}"), &[(name.clone(), None)], &body)
}

fn filter_form(base: &str, metrics: &[String], filter: &SampleFilter) -> String {
    let mut html = format!(
        "<form class=\"inline filter\" method=\"get\" action=\"{}#samples\">\
         <label>metric <select name=\"metric\"><option value=\"\">choose</option>",
        e(base)
    );
    for metric in metrics {
        let selected = if filter.metric.as_deref() == Some(metric) {
            " selected"
        } else {
            ""
        };
        let _ = write!(
            html,
            "<option value=\"{0}\"{selected}>{0}</option>",
            e(metric)
        );
    }
    html.push_str(
        "</select></label> <label>status <select name=\"status\"><option value=\"\">any</option>",
    );
    for status in StatusFilter::ALL {
        let selected = if filter.status == Some(status) {
            " selected"
        } else {
            ""
        };
        let _ = write!(
            html,
            "<option value=\"{0}\"{selected}>{0}</option>",
            status.as_str()
        );
    }
    let bound = |value: Option<f64>| value.map_or_else(String::new, |v| v.to_string());
    let _ = writeln!(
        html,
        "</select></label> <label>from <input type=\"number\" name=\"min\" step=\"any\" \
         value=\"{}\"></label> <label>to <input type=\"number\" name=\"max\" step=\"any\" \
         value=\"{}\"></label> <button type=\"submit\">Filter</button> \
         <a href=\"{}#samples\">clear</a></form>",
        bound(filter.min),
        bound(filter.max),
        e(base)
    );
    html
}

pub(crate) async fn report(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Html<String>, PageError> {
    let html = state
        .read(move |runs| match runs.stored_report(&name)? {
            Some(stored) => Ok(without_paths(&stored).into_owned()),
            None => {
                let mut run = runs.load(&name)?;
                public_run(&mut run);
                Ok(render_html(&run, &[]))
            }
        })
        .await?;
    Ok(Html(html))
}

pub(crate) async fn compare(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Html<String>, PageError> {
    let request = CompareRequest::from_query(&QueryParams::parse(query.as_deref()))?;
    let comparison = state.read(move |runs| request.compare(runs)).await?;
    let title = compare_title(&comparison);
    let runs: Vec<String> = comparison
        .runs
        .iter()
        .map(|run| query_pair("run", &run.name))
        .collect();
    let body = format!(
        "<h1>{}</h1>\n{}<p class=\"muted\">JSON: <a href=\"/api/compare?{}\">/api/compare</a></p>\n",
        e(&title),
        render_compare_body(&comparison),
        e(&runs.join("&"))
    );
    Ok(page(&title, &[("compare".into(), None)], &body))
}

pub(crate) async fn not_found(uri: Uri) -> PageError {
    PageError(ServerError::NoSuchPage {
        path: uri.path().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_one_path_segment() {
        assert_eq!(segment("fiqa-v1.2_x~"), "fiqa-v1.2_x~");
        assert_eq!(segment("a b/c?#"), "a%20b%2Fc%3F%23");
        assert_eq!(segment("问"), "%E9%97%AE");
    }
}
