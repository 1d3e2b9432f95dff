//! `rageval rank`, `rageval reference` and `rageval pipeline`: the flags as
//! `rageval_run`'s options, and what each prints on stdout.
//!
//! - this module: `rank`, and the options the three share;
//! - [`mod@reference`]: `reference`; [`pipeline`]: `pipeline`.

pub mod pipeline;
pub mod reference;

use std::io::Write;

use anyhow::Context as _;
use rageval_rank::Algorithm;
use rageval_run::commands::rank::{self, RankOptions, RankingOptions};
use rageval_run::engine::questions::QuestionData;

use super::{Exit, completed, estimate};
use crate::cli::{AlgorithmArg, RankArgs, RankDataArgs, RankingArgs};
use crate::judge;
use crate::ui::Ui;

pub fn run(args: &RankArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let options = RankOptions {
        data: question_data(&args.data),
        ranking: ranking_options(&args.ranking),
        top_k: args.agreement_k,
        judge: judge::options(&args.judge),
    };
    if args.data.run_dir.dry_run {
        return estimate(
            rageval_run::commands::rank::plan::estimate(&options, &judge::env, ui)?,
            ui,
            out,
        );
    }
    let cancel = crate::signals::cancel_on_ctrl_c();
    let ranked = match completed(rank::run(&options, &judge::env, ui, &cancel)?, ui) {
        Ok(ranked) => ranked,
        Err(exit) => return Ok(exit),
    };
    print_ranked(&ranked, out)?;
    ui.note(&format!(
        "wrote {}",
        ranked.path.join(rank::RANKINGS_FILE).display()
    ));
    Ok(Exit::Success)
}

/// The ranking's figures and the judge's footer on stdout.
pub fn print_ranked(ranked: &rank::Ranked, out: &mut dyn Write) -> anyhow::Result<()> {
    out.write_all(ranked.summary.render(ranked.algorithm, ranked.k).as_bytes())
        .context("cannot write to stdout")?;
    writeln!(out, "{}", ranked.footer).context("cannot write to stdout")
}

/// The questions' options.
pub fn question_data(args: &RankDataArgs) -> QuestionData {
    QuestionData {
        data: args.data.clone(),
        format: args.dataset.format,
        field_map: args.dataset.field_map.clone(),
        sheet: args.dataset.sheet.clone(),
        samples: args.samples,
        out: args.run_dir.out.clone(),
        overwrite: args.run_dir.overwrite,
        retry_failed: args.run_dir.retry_failed,
        seed: args.run_dir.seed,
    }
}

/// The ranking options.
pub fn ranking_options(args: &RankingArgs) -> RankingOptions {
    RankingOptions {
        algorithm: match args.algorithm {
            AlgorithmArg::Listwise => Algorithm::Listwise,
            AlgorithmArg::BradleyTerry => Algorithm::BradleyTerry,
            AlgorithmArg::Insertion => Algorithm::Insertion,
        },
        grade_batch: args.grade_batch,
        window: args.window,
        both_orders: args.both_orders,
        questions_at_once: args.questions_at_once,
    }
}
