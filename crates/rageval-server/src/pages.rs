//! The HTML pages, rendered on the server in the report's style (its shell and pieces come
//! from `rageval-report`): no script, nothing loaded from elsewhere, forms that submit with
//! `GET` so every view is a link.
//!
//! - `/`: the runs, with their kind and means (a `rank` run's and a pipeline's
//!   retriever-versus-judge figures, a `reference` run's counts), and a form to compare the
//!   ticked ones;
//! - `/runs/{name}`: a run's summary (led by a `judge-check` run's agreement with its
//!   labels; a `rank` / `pipeline` run's retriever-versus-judge figures after it) and its
//!   samples, filtered by a metric's range or status;
//! - `/runs/{name}/report`: the run's `report.html` as `rageval eval` wrote it (rendered
//!   from the run, without texts, when the file is missing);
//! - `/compare?run=A&run=B…`: the version table and paired differences, samples paired by
//!   id and question (`&common=1`: only the questions every run holds; `&min_overlap=X`).

use std::fmt::Write as _;

use axum::extract::{Path, RawQuery, State};
use axum::http::Uri;
use axum::response::{Html, IntoResponse, Response};
use rageval_report::{
    RankAgreementSummary, compare_title, escape_html as e, html_document, rank_figure_label,
    render_agreement, render_compare_body, render_html, render_rank_agreement, render_run_summary,
    render_sample_table,
};

use crate::compare::CompareRequest;
use crate::public::{public_manifest, public_report, shown_path};
use crate::query::QueryParams;
use crate::runs::{RunEntry, RunState, error_chain};
use crate::{AppState, SampleFilter, ServerError, StatusFilter};

/// Rows of the per-sample table on one page; the API pages through more.
const ROWS_PER_PAGE: usize = 1000;

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
        (status, page("rageval: error", &[], &body)).into_response()
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
    let link = format!("/runs/{}", segment(&entry.name));
    let kind = format!(" <span class=\"muted\">{}</span>", e(&entry.kind));
    let (tick, run, status, mut means) = match &entry.state {
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
                format!("<a href=\"{}\">{name}</a>", e(&link)),
                format!("complete{kind}"),
                means.join(" "),
            )
        }
        // A `rank` or `reference` run has no samples to page or compare: its figures are
        // the row's.
        RunState::Finished => (
            String::new(),
            name.clone(),
            format!("complete{kind}"),
            String::new(),
        ),
        RunState::Running => (
            String::new(),
            name.clone(),
            format!("<span class=\"muted\">running or stopped</span>{kind}"),
            String::new(),
        ),
        RunState::Unreadable(why) => (
            String::new(),
            name.clone(),
            format!("<span class=\"bad\">unreadable</span>: {}", e(why)),
            String::new(),
        ),
    };
    if let Some(agreement) = &entry.rank_agreement {
        means.push_str(&rank_chips(agreement));
    }
    if let Some(counts) = &entry.references {
        let _ = write!(
            means,
            "<span class=\"chip\">references written {} of {}</span>",
            counts.written, counts.questions
        );
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
         <td class=\"num\">{samples}</td><td class=\"nowrap\">{}</td><td class=\"chips\">{means}</td></tr>\n",
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
    let (mut run, shown) = state
        .read(move |runs| {
            let run = runs.load(&name)?;
            let shown = wanted.select(&run)?;
            Ok((run, shown))
        })
        .await?;
    run.manifest = public_manifest(&run.manifest);
    let name = run.name();
    let base = format!("/runs/{}", segment(&name));
    let api_samples = match &query {
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
    body.push_str(&render_agreement(&run, &format!("{base}/report")));
    body.push_str(&render_run_summary(&run));
    body.push_str(&render_rank_agreement(&run, &format!("{base}/report")));
    body.push_str("<h2 id=\"samples\">Samples</h2>\n");
    body.push_str(&filter_form(&base, &run.metric_names(), &filter));
    let total = run.sample_ids().len();
    let _ = writeln!(
        body,
        "<p class=\"count\"><b>{}</b> of {total} samples: {}</p>",
        shown.len(),
        e(&filter.describe())
    );
    body.push_str(&render_sample_table(
        &run,
        &[],
        &shown[..shown.len().min(ROWS_PER_PAGE)],
        &format!("{base}/report"),
    ));
    if shown.len() > ROWS_PER_PAGE {
        let _ = writeln!(
            body,
            "<p class=\"muted\">The first {ROWS_PER_PAGE} are shown: narrow the filter, or \
             page through <a href=\"{}\">the API</a> with offset and limit.</p>",
            e(&api_samples)
        );
    }
    let crumbs = [(name.clone(), None)];
    Ok(page(&format!("rageval: {name}"), &crumbs, &body))
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
            Some(stored) => Ok(public_report(&stored, runs.path(), &runs.manifest(&name)?)),
            None => {
                let mut run = runs.load(&name)?;
                run.manifest = public_manifest(&run.manifest);
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
