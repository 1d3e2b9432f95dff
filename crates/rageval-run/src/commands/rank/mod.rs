//! `rank`: each question's contexts ordered by the judge and compared with the retriever's
//! order, one question at a time into a resumable run directory.
//!
//! The directory holds `manifest.json`, `rankings.jsonl` (the journal: one
//! [`QuestionRanking`] per finished question; input order once complete),
//! `rank_agreement.jsonl` (per question, the retriever-versus-judge figures the reports
//! show) and `summary.json` ([`RankSummary`] with the judge's accounts). A question whose
//! calls were refused by a stop (Ctrl-C, a cap, a judge halted as unavailable) is held back
//! for the next session, never journaled. Figures are computed only over questions whose
//! grades all came back; the others are counted and named, never scored as disagreement.
//!
//! The questions are read and worked by the engine's question loop
//! ([`crate::engine::questions`]).

pub mod plan;

use std::path::{Path, PathBuf};
use std::time::Instant;

use rageval_core::Sample;
use rageval_judge::CancelToken;
use rageval_rank::agreement::{DEFAULT_RBO_PERSISTENCE, MeanOver};
use rageval_rank::ranking::LIST_ANSWER_TOKENS;
use rageval_rank::{
    AgreementSummary, Algorithm, GoldAgreement, GoldSummary, RankSettings, Ranking,
    RetrieverAgreement, gold_agreement, retriever_agreement, summarize, summarize_gold,
};
use rageval_report::{JudgeAccount, RANK_AGREEMENT_FILE, RankAgreementRow};
use rageval_tasks::{TaskJudge, TaskKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::engine::ended::Ended;
use crate::engine::error::Result;
use crate::engine::judges::{self, Env, JudgeOptions, JudgeSetup};
use crate::engine::observe::Observer;
use crate::engine::questions::{
    Journal, QuestionData, QuestionRun, QuestionRunOptions, QuestionStage, Spoiled,
};
use crate::engine::words::counted;

/// The journal: one line per finished question.
pub const RANKINGS_FILE: &str = "rankings.jsonl";
/// Stage name of `rank`'s progress.
pub const STAGE: &str = "ranking";
/// The tasks a ranking asks.
pub const TASKS: [TaskKind; 4] = [
    TaskKind::GradeRelevance,
    TaskKind::GradeRelevanceBatch,
    TaskKind::PairwisePreference,
    TaskKind::OrderContexts,
];

/// How the useful contexts are ordered, and how many questions at once.
#[derive(Debug, Clone)]
pub struct RankingOptions {
    pub algorithm: Algorithm,
    /// Contexts graded in one call, at most.
    pub grade_batch: usize,
    /// Listwise: contexts ordered in one call, at most.
    pub window: usize,
    /// Insertion: ask each comparison in both orders.
    pub both_orders: bool,
    /// Questions ranked at once.
    pub questions_at_once: usize,
}

/// What `rank` is asked to do.
#[derive(Debug, Clone)]
pub struct RankOptions {
    pub data: QuestionData,
    pub ranking: RankingOptions,
    /// Cut-off of top-k overlap and nDCG@k.
    pub top_k: usize,
    pub judge: JudgeOptions,
}

/// One question's ranking and how it compares.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QuestionRanking {
    pub sample_id: String,
    pub question: String,
    pub ranking: Ranking,
    pub agreement: RetrieverAgreement,
    /// Against the data's gold labels, when it has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<GoldAgreement>,
    pub wall_seconds: f64,
}

impl QuestionRanking {
    /// Why the question is left out of the figures: some grades did not come back.
    pub fn left_out(&self) -> Option<String> {
        let ungraded = &self.ranking.ungraded;
        if ungraded.is_empty() {
            return None;
        }
        let first_error = self
            .ranking
            .grades
            .iter()
            .find_map(|grade| match grade {
                rageval_rank::CallRecord::Failed(error) => Some(error.as_str()),
                rageval_rank::CallRecord::Answer(_) => None,
            })
            .unwrap_or("unknown");
        Some(format!(
            "the judge failed to grade {} of {} contexts: {first_error}",
            ungraded.len(),
            self.ranking.grades.len()
        ))
    }
}

/// A complete `rank`.
#[derive(Debug)]
pub struct Ranked {
    pub path: PathBuf,
    pub summary: RankSummary,
    pub algorithm: Algorithm,
    pub k: usize,
    pub footer: String,
}

/// Ranks every question's contexts into the run directory, resuming what is there.
pub fn run(
    options: &RankOptions,
    env: Env<'_>,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Ranked>> {
    let samples = options.data.read()?;
    let setup = judges::resolve(&options.judge, env)?;
    crate::engine::forecast::announce(
        &setup,
        || plan::estimate(options, env, &crate::engine::observe::Silent),
        observer,
    )?;
    let path = options.data.out_or(&options.data.data, "rank");
    rank_into(options, &samples, &setup, &path, observer, cancel)
}

/// [`run`] over questions already read and a judge already resolved (`pipeline`'s first
/// stage).
pub fn rank_into(
    options: &RankOptions,
    samples: &[Sample],
    setup: &JudgeSetup,
    path: &Path,
    observer: &dyn Observer,
    cancel: &CancelToken,
) -> Result<Ended<Ranked>> {
    let judge = setup.task_judge()?;
    let settings = rank_settings(&options.ranking, options.data.seed, setup);
    let identity_settings = [
        ("algorithm", settings.algorithm.name().to_string()),
        ("seed", settings.seed.to_string()),
        ("grade_batch", settings.grade_batch.to_string()),
        ("window", settings.listwise.window.to_string()),
        ("both_orders", settings.insertion_both_orders.to_string()),
        ("top_k", options.top_k.to_string()),
        ("samples", format!("{:?}", options.data.samples)),
    ];
    let manifest_settings = json!({
        "settings": settings,
        "k": options.top_k,
        "judge": setup.description,
    });
    let (dataset, restart, manifest_settings) = options.data.described(manifest_settings)?;
    let options_of_run = QuestionRunOptions {
        command: "rank",
        dataset,
        restart,
        path,
        manifest_settings,
        identity_settings: &identity_settings,
        tasks: &TASKS,
        journal: Journal {
            file: RANKINGS_FILE,
            key: |line: &QuestionRanking| line.sample_id.clone(),
            failed: |line: &QuestionRanking| line.ranking.calls.failed > 0,
        },
        own_files: &[RANK_AGREEMENT_FILE],
        unit: "questions",
    };
    let mut run = QuestionRun::open(options_of_run, setup, observer)?;
    let k = options.top_k;
    let judge = &judge;
    let settings_ref = &settings;
    let stage = QuestionStage {
        name: STAGE,
        questions: samples,
        at_once: options.ranking.questions_at_once,
    };
    let ended = run.work(
        stage,
        observer,
        cancel,
        |sample| async move { rank_question(judge, sample, settings_ref, k).await },
        |ranked: &Result<QuestionRanking>| match ranked {
            Ok(line) if line.ranking.calls.failed == 0 => Spoiled::No,
            Ok(_) => Spoiled::IfStopping,
            Err(_) => Spoiled::IfStopping,
        },
    )?;
    if let Some(stopped) = ended {
        return Ok(Ended::Stopped(stopped));
    }
    let rankings = run.lines_in_order(samples)?;
    let summary = summarize_rankings(&rankings, run.account());
    let rows: Vec<RankAgreementRow> = rankings.iter().map(|r| agreement_row(r, k)).collect();
    run.write_lines(RANK_AGREEMENT_FILE, &rows)?;
    let footer = run.footer();
    run.finish(&json!({
        "command": "rank",
        "settings": settings,
        "k": k,
        "judge": setup.description,
        "summary": summary,
    }))?;
    Ok(Ended::Complete(Ranked {
        path: path.to_path_buf(),
        summary,
        algorithm: settings.algorithm,
        k,
        footer,
    }))
}

/// The ranking settings of `options` for this judge. Calls that show several contexts get
/// the judge's prompt window less [`LIST_ANSWER_TOKENS`].
pub fn rank_settings(options: &RankingOptions, seed: u64, setup: &JudgeSetup) -> RankSettings {
    let mut settings = RankSettings {
        algorithm: options.algorithm,
        seed,
        max_in_flight: setup.concurrency.max(rageval_rank::DEFAULT_MAX_IN_FLIGHT),
        grade_batch: options.grade_batch,
        max_prompt_tokens: Some(
            usize::try_from(setup.prompt_window())
                .unwrap_or(usize::MAX)
                .saturating_sub(LIST_ANSWER_TOKENS),
        ),
        insertion_both_orders: options.both_orders,
        ..RankSettings::default()
    };
    settings.listwise.window = options.window;
    settings
}

/// Ranks one question's contexts.
async fn rank_question(
    judge: &TaskJudge,
    sample: &Sample,
    settings: &RankSettings,
    k: usize,
) -> Result<QuestionRanking> {
    let started = Instant::now();
    let contexts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
    let ranking = rageval_rank::rank(judge, &sample.question, &contexts, settings).await?;
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

/// The averages of a set of rankings, for summary.json.
#[derive(Debug, Clone, Serialize)]
pub struct RankSummary {
    pub questions: usize,
    /// Questions left out of the figures because some grades did not come back.
    pub left_out: usize,
    pub agreement: AgreementSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<GoldSummary>,
    pub calls: Value,
    pub rounds: Value,
    pub position_inconsistency: MeanOver,
    /// What the judge was asked, over every session.
    pub judge: JudgeAccount,
}

/// The figures over the questions whose grades all came back.
pub fn summarize_rankings(rankings: &[QuestionRanking], judge: JudgeAccount) -> RankSummary {
    let complete: Vec<&QuestionRanking> =
        rankings.iter().filter(|r| r.left_out().is_none()).collect();
    let agreements: Vec<RetrieverAgreement> =
        complete.iter().map(|r| r.agreement.clone()).collect();
    let golds: Vec<GoldAgreement> = complete.iter().filter_map(|r| r.gold.clone()).collect();
    let sum = |f: fn(&Ranking) -> usize| rankings.iter().map(|r| f(&r.ranking)).sum::<usize>();
    let rounds: Vec<u32> = rankings.iter().map(|r| r.ranking.rounds).collect();
    RankSummary {
        questions: rankings.len(),
        left_out: rankings.len() - complete.len(),
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
            complete.iter().map(|r| r.ranking.position_inconsistency),
        ),
        judge,
    }
}

/// The per-question figures the reports show.
fn agreement_row(ranking: &QuestionRanking, k: usize) -> RankAgreementRow {
    let left_out = ranking.left_out();
    let a = &ranking.agreement;
    let figures = left_out.is_none();
    RankAgreementRow {
        sample_id: ranking.sample_id.clone(),
        question: ranking.question.clone(),
        k,
        spearman: a.spearman.filter(|_| figures),
        kendall_tau_b: a.kendall_tau_b.filter(|_| figures),
        top_k_overlap: Some(a.top_k_overlap).filter(|_| figures),
        overlap_indices: if figures {
            a.overlapping.clone()
        } else {
            Vec::new()
        },
        ndcg_at_k: a.ndcg_at_k.filter(|_| figures),
        map: a.average_precision.filter(|_| figures),
        left_out,
    }
}

impl RankSummary {
    /// A few lines for stdout.
    pub fn render(&self, algorithm: Algorithm, k: usize) -> String {
        let mean = |m: &MeanOver| match m.mean {
            Some(v) => format!("{v:.3}"),
            None => "undefined".into(),
        };
        let a = &self.agreement;
        let mut text = format!(
            "ranked {} with {}: calls {} (failed {}), rounds max {}\n",
            counted(self.questions, "questions"),
            algorithm.name(),
            self.calls["total"],
            self.calls["failed"],
            self.rounds["max"],
        );
        if self.left_out > 0 {
            text.push_str(&format!(
                "left out of the figures: {} whose grades did not all come back \
                 (rank_agreement.jsonl says why)\n",
                counted(self.left_out, "questions")
            ));
        }
        text.push_str(&format!(
            "retriever vs judge ({}): spearman {}  kendall_tau_b {}  top{k}_overlap {}  \
             rbo {}  ndcg@{k} {}  map {}\n",
            counted(self.questions - self.left_out, "questions"),
            mean(&a.spearman),
            mean(&a.kendall_tau_b),
            mean(&a.top_k_overlap),
            mean(&a.rbo_extrapolated),
            mean(&a.ndcg_at_k),
            mean(&a.mean_average_precision),
        ));
        if let Some(gold) = &self.gold {
            text.push_str(&format!(
                "gold labels ({}): judge auroc {} ndcg@{k} {} map {} | retriever \
                 auroc {} ndcg@{k} {} map {}\n",
                counted(gold.questions, "questions"),
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
}
