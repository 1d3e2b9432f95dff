//! The progress bar on stderr: samples done (of how many, when known), cells failed, rate.
//! indicatif draws nothing when stderr is not a terminal; the bar uses no colour, so
//! `NO_COLOR` has nothing to turn off.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress of one run.
pub struct Progress {
    bar: ProgressBar,
    failed: u64,
}

impl Progress {
    /// A bar over `total` samples, or a counter when the total is unknown.
    pub fn new(total: Option<u64>) -> Self {
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        let template = if total.is_some() {
            "{elapsed_precise} [{wide_bar}] {pos}/{len} samples, {per_sec} {msg}"
        } else {
            "{elapsed_precise} {spinner} {pos} samples, {per_sec} {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress { bar, failed: 0 }
    }

    /// One sample done, with `failed` of its cells failed.
    pub fn sample_done(&mut self, failed: u64) {
        if failed > 0 {
            self.failed += failed;
            self.bar
                .set_message(format!("({} cells failed)", self.failed));
        }
        self.bar.inc(1);
    }

    /// Removes the bar before the summary is printed.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
