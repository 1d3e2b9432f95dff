//! `rageval rank`, `rageval reference` and `rageval pipeline` (seed S3): read a dataset,
//! build the judge as `eval` does, and run `rageval-rank`'s algorithms with every call going
//! through `rageval_tasks::TaskJudge` (cached, limited, structured).
//!
//! - this module: the `rank` command and what the three share (reading the data, the judge,
//!   the output directory);
//! - [`mod@reference`]: `GT_` / `FULL_` files; [`pipeline`]: rank → reference → eval → report;
//! - [`output`]: an output directory that appears only once complete.

pub mod output;
pub mod pipeline;
pub mod reference;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use futures_util::stream::{self, StreamExt};
use rageval_core::Sample;
use rageval_core::dataset::{self, FieldMap, ReadOptions};
use rageval_rank::agreement::{DEFAULT_RBO_PERSISTENCE, MeanOver};
use rageval_rank::ranking::LIST_ANSWER_TOKENS;
use rageval_rank::{
    AgreementSummary, Algorithm, GoldAgreement, GoldSummary, RankSettings, Ranking,
    RetrieverAgreement, gold_agreement, retriever_agreement, summarize, summarize_gold,
};
use rageval_tasks::{Lang, LangChoice, TaskJudge};
use serde::Serialize;
use serde_json::{Value, json};

use super::eval::judge::resolve;
use crate::cli::{AlgorithmArg, JudgeArgs, LangArg, RankArgs, RankDataArgs, RankingArgs};
use output::{OutputDir, write_file};

/// Per question, one JSON line.
pub const RANKINGS_FILE: &str = "rankings.jsonl";
/// Averages and settings.
pub const SUMMARY_FILE: &str = "summary.json";

/// One question's ranking and how it compares.
#[derive(Debug, Serialize)]
pub struct QuestionRanking {
    pub sample_id: String,
    pub question: String,
    pub ranking: Ranking,
    pub agreement: RetrieverAgreement,
    /// Against the data's gold labels, when it has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<GoldAgreement>,
    pub wall_seconds: f64,
}

/// The judge as the task router, with what to say about it.
pub struct TaskSetup {
    pub judge: TaskJudge,
    pub description: Value,
    /// The limiter's ceiling on calls in flight.
    pub concurrency: usize,
    /// Prompt tokens a call may fill: `--context-window`, bounded by a local chat model's
    /// own window (`JudgeSetup::window`).
    pub context_window: u64,
}

/// The judge from `--judge-*` flags, resolved as `eval` resolves it.
pub fn task_judge(args: &JudgeArgs) -> anyhow::Result<TaskSetup> {
    let setup = resolve(args)?;
    let lang = match args.lang {
        LangArg::Auto => LangChoice::Auto,
        LangArg::En => LangChoice::Force(Lang::En),
        LangArg::Zh => LangChoice::Force(Lang::Zh),
    };
    let judge = setup
        .judges
        .tasks()
        .cloned()
        .context("no judge is configured")?
        .with_lang(lang);
    let context_window = setup
        .window(args.context_window)
        .map_or(args.context_window, |w| {
            u64::try_from(w).unwrap_or(u64::MAX)
        });
    Ok(TaskSetup {
        judge,
        description: setup.description,
        concurrency: setup.concurrency,
        context_window,
    })
}

/// Every sample of the dataset (at most `--samples`), or the reader's error naming file,
/// line and field.
pub fn read_samples(
    data: &Path,
    field_map: &[String],
    format: Option<crate::cli::DataFormat>,
    sheet: Option<String>,
    limit: Option<usize>,
) -> anyhow::Result<Vec<Sample>> {
    let options = ReadOptions {
        format: format.map(super::eval::format_of),
        field_map: FieldMap::parse(field_map)?,
        sheet,
    };
    let reader = dataset::open(data, &options)?;
    let mut samples = Vec::new();
    for sample in reader.take(limit.unwrap_or(usize::MAX)) {
        samples.push(sample?);
    }
    if samples.is_empty() {
        anyhow::bail!("{} has no questions", data.display());
    }
    Ok(samples)
}

/// `runs/<dataset stem>-<suffix>`.
pub fn default_out(data: &Path, suffix: &str) -> PathBuf {
    let stem = data
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data".into());
    PathBuf::from("runs").join(format!("{stem}-{suffix}"))
}

/// The ranking settings of these flags. Calls that show several contexts get the judge's
/// `context_window` less [`LIST_ANSWER_TOKENS`] for their prompt.
pub fn rank_settings(
    args: &RankingArgs,
    seed: u64,
    concurrency: usize,
    context_window: u64,
) -> RankSettings {
    let mut settings = RankSettings {
        algorithm: match args.algorithm {
            AlgorithmArg::Listwise => Algorithm::Listwise,
            AlgorithmArg::BradleyTerry => Algorithm::BradleyTerry,
            AlgorithmArg::Insertion => Algorithm::Insertion,
        },
        seed,
        max_in_flight: concurrency.max(rageval_rank::DEFAULT_MAX_IN_FLIGHT),
        grade_batch: args.grade_batch,
        max_prompt_tokens: Some(
            usize::try_from(context_window)
                .unwrap_or(usize::MAX)
                .saturating_sub(LIST_ANSWER_TOKENS),
        ),
        insertion_both_orders: args.both_orders,
        ..RankSettings::default()
    };
    settings.listwise.window = args.window;
    settings
}

/// Gold labels of `sample`'s contexts: by id when it lists reference context ids, else by
/// text when it lists reference contexts; `None` when it has neither.
fn gold_labels(sample: &Sample) -> Option<Vec<bool>> {
    if !sample.reference_context_ids.is_empty() {
        let ids: Vec<&str> = sample
            .reference_context_ids
            .iter()
            .map(String::as_str)
            .collect();
        return Some(
            sample
                .contexts
                .iter()
                .map(|c| c.id.as_deref().is_some_and(|id| ids.contains(&id)))
                .collect(),
        );
    }
    if !sample.reference_contexts.is_empty() {
        let texts: Vec<&str> = sample.reference_contexts.iter().map(|t| t.trim()).collect();
        return Some(
            sample
                .contexts
                .iter()
                .map(|c| texts.contains(&c.text.trim()))
                .collect(),
        );
    }
    None
}

/// Ranks every sample's contexts, `at_once` questions concurrently, in data order.
pub async fn rank_samples(
    judge: &TaskJudge,
    samples: &[Sample],
    settings: &RankSettings,
    k: usize,
    at_once: usize,
) -> anyhow::Result<Vec<QuestionRanking>> {
    let results: Vec<anyhow::Result<QuestionRanking>> = stream::iter(samples)
        .map(|sample| async move {
            let started = Instant::now();
            let contexts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
            let ranking = rageval_rank::rank(judge, &sample.question, &contexts, settings)
                .await
                .with_context(|| format!("sample {}", sample.id))?;
            let agreement = retriever_agreement(&ranking, k, DEFAULT_RBO_PERSISTENCE);
            let gold = gold_labels(sample).and_then(|labels| gold_agreement(&ranking, &labels, k));
            Ok(QuestionRanking {
                sample_id: sample.id.clone(),
                question: sample.question.clone(),
                ranking,
                agreement,
                gold,
                wall_seconds: started.elapsed().as_secs_f64(),
            })
        })
        .buffered(at_once.max(1))
        .collect()
        .await;
    results.into_iter().collect()
}

/// The averages of a set of rankings, for summary.json.
#[derive(Debug, Serialize)]
pub struct RankSummary {
    pub questions: usize,
    pub agreement: AgreementSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<GoldSummary>,
    pub calls: Value,
    pub rounds: Value,
    pub position_inconsistency: MeanOver,
}

pub fn summarize_rankings(rankings: &[QuestionRanking]) -> RankSummary {
    let agreements: Vec<RetrieverAgreement> =
        rankings.iter().map(|r| r.agreement.clone()).collect();
    let golds: Vec<GoldAgreement> = rankings.iter().filter_map(|r| r.gold.clone()).collect();
    let sum = |f: fn(&Ranking) -> usize| rankings.iter().map(|r| f(&r.ranking)).sum::<usize>();
    let rounds: Vec<u32> = rankings.iter().map(|r| r.ranking.rounds).collect();
    RankSummary {
        questions: rankings.len(),
        agreement: summarize(&agreements),
        gold: (!golds.is_empty()).then(|| summarize_gold(&golds)),
        calls: json!({
            "grade": sum(|r| r.calls.grade),
            "compare": sum(|r| r.calls.compare),
            "order": sum(|r| r.calls.order),
            "failed": sum(|r| r.calls.failed),
            "total": sum(|r| r.calls.total()),
        }),
        rounds: json!({
            "max": rounds.iter().max(),
            "total": rounds.iter().map(|&r| u64::from(r)).sum::<u64>(),
        }),
        position_inconsistency: MeanOver::of(
            rankings.iter().map(|r| r.ranking.position_inconsistency),
        ),
    }
}

/// Writes rankings.jsonl and summary.json into `dir`.
pub fn write_rankings(
    dir: &Path,
    rankings: &[QuestionRanking],
    summary: &Value,
) -> anyhow::Result<()> {
    let mut lines = String::new();
    for ranking in rankings {
        lines.push_str(&serde_json::to_string(ranking)?);
        lines.push('\n');
    }
    write_file(dir, RANKINGS_FILE, lines.as_bytes())?;
    write_file(
        dir,
        SUMMARY_FILE,
        serde_json::to_string_pretty(summary)?.as_bytes(),
    )
}

/// A few lines for stdout.
pub fn render_summary(summary: &RankSummary, algorithm: &str, k: usize) -> String {
    let mean = |m: &MeanOver| match m.mean {
        Some(v) => format!("{v:.3}"),
        None => "undefined".into(),
    };
    let a = &summary.agreement;
    let mut text = format!(
        "ranked {} questions with {algorithm}: calls {} (failed {}), rounds max {}\n\
         retriever vs judge: spearman {}  kendall_tau_b {}  top{k}_overlap {}  rbo {}  \
         ndcg@{k} {}  map {}\n",
        summary.questions,
        summary.calls["total"],
        summary.calls["failed"],
        summary.rounds["max"],
        mean(&a.spearman),
        mean(&a.kendall_tau_b),
        mean(&a.top_k_overlap),
        mean(&a.rbo_extrapolated),
        mean(&a.ndcg_at_k),
        mean(&a.mean_average_precision),
    );
    if let Some(gold) = &summary.gold {
        text.push_str(&format!(
            "gold labels ({} questions): judge auroc {} ndcg@{k} {} map {} | retriever auroc {} \
             ndcg@{k} {} map {}\n",
            gold.questions,
            mean(&gold.judge.auroc),
            mean(&gold.judge.ndcg_at_k),
            mean(&gold.judge.mean_average_precision),
            mean(&gold.retriever.auroc),
            mean(&gold.retriever.ndcg_at_k),
            mean(&gold.retriever.mean_average_precision),
        ));
    }
    text
}

/// A multi-threaded runtime for the judge calls.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub fn run(args: &RankArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let data: &RankDataArgs = &args.data;
    let samples = read_samples(
        &data.data,
        &data.field_map,
        data.format,
        data.sheet.clone(),
        data.samples,
    )?;
    let setup = task_judge(&args.judge)?;
    let settings = rank_settings(
        &args.ranking,
        data.seed,
        setup.concurrency,
        setup.context_window,
    );
    let path = data
        .out
        .clone()
        .unwrap_or_else(|| default_out(&data.data, "rank"));
    let dir = OutputDir::create(&path, data.overwrite)?;
    let started = Instant::now();
    let rankings = runtime()?.block_on(rank_samples(
        &setup.judge,
        &samples,
        &settings,
        args.top_k,
        args.ranking.questions_at_once,
    ))?;
    let wall = started.elapsed().as_secs_f64();
    let summary = summarize_rankings(&rankings);
    let json = json!({
        "command": "rank",
        "dataset": data.data.display().to_string(),
        "settings": settings,
        "k": args.top_k,
        "judge": setup.description,
        "wall_seconds": wall,
        "summary": summary,
    });
    write_rankings(dir.path(), &rankings, &json)?;
    let written = dir.commit()?;
    let text = render_summary(&summary, settings.algorithm.name(), args.top_k);
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    note(&format!(
        "wrote {} in {wall:.1} s",
        written.join(RANKINGS_FILE).display()
    ));
    Ok(ExitCode::SUCCESS)
}

/// A status line on stderr.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
