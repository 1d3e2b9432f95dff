//! What the person at the terminal sees on stderr while a command runs: notes, and progress
//! for every stage — a bar on a terminal, plain lines with `--progress` elsewhere (a CI log),
//! nothing with `-q` — plus `-v`'s debug events (Ctrl-C and SIGTERM are `signals`'). Data
//! goes to stdout from the commands; everything here goes to stderr. No colour is used, so
//! `NO_COLOR` has nothing to turn off.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rageval_run::{Event, Observer, Progress};

/// How often plain progress lines are printed, at most.
const LINE_EVERY: Duration = Duration::from_secs(2);

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    /// Nothing but errors (`-q`).
    Quiet,
    /// A bar when stderr is a terminal, else nothing.
    Auto,
    /// Plain lines when stderr is not a terminal (`--progress`), a bar when it is.
    Lines,
}

/// The stderr side of a command.
pub struct Ui {
    show: Show,
    terminal: bool,
    stage: Mutex<Option<StageView>>,
    /// Whether the answer cache's failed writes were warned of already (once per command).
    cache_warned: std::sync::atomic::AtomicBool,
}

struct StageView {
    started: Instant,
    bar: Option<ProgressBar>,
    last_line: Option<Instant>,
    last: Option<Progress>,
    /// The progress the last plain line showed, so the closing line is not printed twice.
    printed: Option<Progress>,
}

impl Ui {
    /// The view chosen by `-q`, `--progress` and whether stderr is a terminal.
    pub fn new(quiet: bool, progress: bool) -> Self {
        let show = match (quiet, progress) {
            (true, _) => Show::Quiet,
            (false, true) => Show::Lines,
            (false, false) => Show::Auto,
        };
        Ui {
            show,
            terminal: std::io::stderr().is_terminal(),
            stage: Mutex::new(None),
            cache_warned: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A line on stderr, unless `-q`.
    pub fn note(&self, text: &str) {
        if self.show != Show::Quiet {
            self.print_above_bar(text);
        }
    }

    /// A warning on stderr, even with `-q`.
    pub fn warn(&self, text: &str) {
        eprintln_locked(text);
    }

    /// A line on stderr, above the bar when one is drawn.
    fn print_above_bar(&self, text: &str) {
        let stage = self.lock();
        match stage.as_ref().and_then(|s| s.bar.as_ref()) {
            Some(bar) => bar.suspend(|| eprintln_locked(text)),
            None => eprintln_locked(text),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<StageView>> {
        self.stage.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn start(&self, name: &'static str, total: Option<u64>) {
        let bar = (self.show != Show::Quiet && self.terminal).then(|| {
            let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
            let template = if total.is_some() {
                "{elapsed_precise} {prefix} [{wide_bar}] {pos}/{len}, {per_sec}, eta {eta} {msg}"
            } else {
                "{elapsed_precise} {prefix} {spinner} {pos}, {per_sec} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_prefix(name);
            bar
        });
        *self.lock() = Some(StageView {
            started: Instant::now(),
            bar,
            last_line: None,
            last: None,
            printed: None,
        });
    }

    fn progress(&self, progress: &Progress) {
        if progress.cache_write_errors > 0
            && !self
                .cache_warned
                .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            self.print_above_bar(&cache_warning(progress.cache_write_errors));
        }
        let mut stage = self.lock();
        let Some(view) = stage.as_mut() else {
            return;
        };
        view.last = Some(*progress);
        if let Some(bar) = &view.bar {
            if let Some(total) = progress.total {
                bar.set_length(total);
            }
            bar.set_position(progress.done);
            bar.set_message(counters(progress));
            return;
        }
        if self.show != Show::Lines {
            return;
        }
        let due = view.last_line.is_none_or(|at| at.elapsed() >= LINE_EVERY);
        if due {
            view.last_line = Some(Instant::now());
            view.printed = Some(*progress);
            eprintln_locked(&progress_line(progress, view.started.elapsed()));
        }
    }

    fn end(&self) {
        let Some(view) = self.lock().take() else {
            return;
        };
        if let Some(bar) = view.bar {
            bar.finish_and_clear();
        }
        // The last plain line, so a log always ends with where the stage stood.
        if self.show == Show::Lines && !self.terminal {
            let shown = view.last == view.printed;
            if let Some(last) = view.last.filter(|_| view.last_line.is_some() && !shown) {
                eprintln_locked(&progress_line(&last, view.started.elapsed()));
            }
        }
    }
}

impl Observer for Ui {
    fn event(&self, event: &Event) {
        match event {
            Event::Note(text) => self.note(text),
            Event::Stage { name, total } => self.start(name, *total),
            Event::Progress(progress) => self.progress(progress),
            Event::StageEnd => self.end(),
        }
    }
}

/// `scoring 12/30, 3 failed, 45 model calls (10 cached, 1 failed attempt), 2.1/s, eta 8s`.
pub fn progress_line(progress: &Progress, elapsed: Duration) -> String {
    let done = match progress.total {
        Some(total) => format!("{}/{total}", progress.done),
        None => progress.done.to_string(),
    };
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        progress.done as f64 / seconds
    } else {
        0.0
    };
    let mut line = format!("{} {done}, {}", progress.stage, counters(progress));
    line.push_str(&format!(", {rate:.1}/s"));
    if let Some(total) = progress.total
        && rate > 0.0
        && total > progress.done
    {
        let left = (total - progress.done) as f64 / rate;
        line.push_str(&format!(", eta {}", short_duration(left)));
    }
    line
}

fn counters(progress: &Progress) -> String {
    let mut text = format!("{} failed, {} model calls", progress.failed, progress.calls);
    if progress.cache_hits > 0 || progress.failed_calls > 0 {
        text.push_str(&format!(
            " ({} cached, {} failed attempts)",
            progress.cache_hits, progress.failed_calls
        ));
    }
    text
}

fn short_duration(seconds: f64) -> String {
    let seconds = seconds.round() as u64;
    match seconds {
        0..=59 => format!("{seconds}s"),
        60..=3599 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, (seconds % 3600) / 60),
    }
}

/// The warning, shown once, that the answer cache stopped storing answers (issue 40 item 6:
/// a full disk used to go unsaid). The footer gives the final count.
fn cache_warning(failed: u64) -> String {
    format!(
        "warning: {failed} judge answers could not be stored in the answer cache so far (a \
         full disk? `-v` shows why); the run goes on and its journal keeps every score, but a \
         later run asks the judge for them again and `--offline` misses them"
    )
}

fn eprintln_locked(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_line_says_stage_counts_rate_and_eta() {
        let progress = Progress {
            stage: "scoring",
            done: 12,
            total: Some(30),
            failed: 3,
            calls: 45,
            cache_hits: 10,
            failed_calls: 1,
            cache_write_errors: 0,
        };
        assert_eq!(
            progress_line(&progress, Duration::from_secs(6)),
            "scoring 12/30, 3 failed, 45 model calls (10 cached, 1 failed attempts), 2.0/s, \
             eta 9s"
        );
        let unknown = Progress {
            stage: "ranking",
            done: 4,
            ..Progress::default()
        };
        assert_eq!(
            progress_line(&unknown, Duration::from_secs(2)),
            "ranking 4, 0 failed, 0 model calls, 2.0/s"
        );
        assert_eq!(short_duration(3725.0), "1h02m");
    }
}
