//! `rageval reference`: the flags as `rageval_run::commands::reference`'s options; a line per
//! run on stdout, the questions left without a reference on stderr.

use std::io::Write;

use anyhow::Context as _;
use rageval_rank::ReferenceMode;
use rageval_run::commands::reference::{self, ReferenceOptions, ReferenceRunOptions};

use super::question_data;
use crate::cli::{ReferenceArgs, ReferenceModeArg};
use crate::commands::{Exit, completed, estimate};
use crate::judge;
use crate::ui::Ui;

pub fn run(args: &ReferenceArgs, ui: &Ui, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let options = ReferenceRunOptions {
        data: question_data(&args.data),
        reference: reference_options(&args.reference),
        judge: judge::options(&args.judge),
    };
    if args.data.run_dir.dry_run {
        return estimate(
            rageval_run::commands::reference::plan::estimate(&options, &judge::env, ui)?,
            ui,
            out,
        );
    }
    let cancel = crate::signals::cancel_on_ctrl_c();
    let done = match completed(reference::run(&options, &judge::env, ui, &cancel)?, ui) {
        Ok(done) => done,
        Err(exit) => return Ok(exit),
    };
    print_referenced(&done, ui, out)?;
    ui.note(&format!("wrote {}", done.path.display()));
    Ok(Exit::Success)
}

/// The references' line and footer on stdout, the missing ones on stderr.
pub fn print_referenced(
    done: &reference::Referenced,
    ui: &Ui,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    for note in reference::missing_notes(&done.lines) {
        ui.note(&note);
    }
    out.write_all(done.summary.render().as_bytes())
        .context("cannot write to stdout")?;
    writeln!(out, "{}", done.footer).context("cannot write to stdout")
}

/// The reference options.
pub fn reference_options(args: &crate::cli::ReferenceOptions) -> ReferenceOptions {
    ReferenceOptions {
        mode: match args.mode {
            ReferenceModeArg::Slow => ReferenceMode::Slow,
            ReferenceModeArg::Fast => ReferenceMode::Fast,
        },
        group_size: args.group_size,
        answer_tokens: args.answer_tokens,
    }
}
