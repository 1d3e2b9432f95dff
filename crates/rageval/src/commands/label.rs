//! `rageval label RUN_DIR`: the labelling page (`rageval_server::label_server`) over a
//! finished run and its dataset's texts (a test set's file goes to `label_review`). Prints
//! the page's URL on stdout, what is labelled and where the labels go on stderr, then
//! serves until the process is stopped.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};

use anyhow::Context as _;
use rageval_report::RunData;
use rageval_run::engine::reports::samples_of;
use rageval_server::{LabelOptions, LabelScale, PageLanguage, label_server};

use super::Exit;
use crate::cli::{LabelArgs, LabelScaleArg, PageLangArg};
use crate::ui::Ui;

pub fn run(args: &LabelArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    if args.run.is_file() {
        return super::label_review::run(args, ui, out);
    }
    if args.summary {
        anyhow::bail!(
            "--summary reads the review of a test set, and {} is not a file (hint: name the testset.jsonl)",
            args.run.display()
        );
    }
    let run = RunData::load(&args.run)?;
    let samples = samples_of(&run.manifest, &run.path, ui);
    let options = LabelOptions {
        metric: args.metric.clone(),
        samples: args.samples,
        seed: args.seed,
        stratify: args.stratify.clone(),
        labeller: args.labeller.clone(),
        scale: args.scale.map(|scale| match scale {
            LabelScaleArg::Binary => LabelScale::Binary,
            LabelScaleArg::Graded => LabelScale::Graded,
        }),
        language: args.lang.map(|lang| match lang {
            PageLangArg::En => PageLanguage::En,
            PageLangArg::Zh => PageLanguage::Zh,
        }),
        labels: args.labels.clone(),
        summaries_zh: run
            .manifest
            .metrics
            .iter()
            .filter_map(|m| Some((m.name.clone(), rageval_metrics::summary_zh(&m.name)?.into())))
            .collect(),
        bind: SocketAddr::from((Ipv4Addr::LOCALHOST, args.port)),
    };
    let server = label_server(&run, &samples, &options)?;
    let info = server.info();
    let scale = match info.scale {
        LabelScale::Binary => "yes/no".to_string(),
        LabelScale::Graded => format!("grades 1–{}", LabelScale::TOP_GRADE),
    };
    ui.note(&format!(
        "labelling `{}` ({scale}) as {}: {} samples, {} labelled already",
        info.metric, args.labeller, info.items, info.labelled
    ));
    ui.note(&format!(
        "labels are saved as you go to {}",
        info.labels_file.display()
    ));
    ui.note(&format!("then: {}", info.next_commands.join("\n      ")));
    writeln!(out, "{}", info.url)
        .and_then(|()| out.flush())
        .context("cannot write to stdout")?;
    ui.note("open the address above in a browser; Ctrl-C stops");
    server.run()?;
    Ok(Exit::Success)
}
