//! A full disk (issue 40, items 5 and 7), on a small tmpfs mounted for each case: a run
//! that fills its disk keeps what it journaled, exits 74 saying "disk full", and resumes to
//! the end once space is back; reports written onto a full disk are whole or absent, never
//! truncated, and never a panic. Mounting needs root: where `mount` fails (an unprivileged
//! CI runner) each test says it is skipped and why, and passes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rageval_report::testing::calamine::{Reader, Xlsx, open_workbook};
use rageval_testkit::MockConfig;

use crate::judged::{checked_cells, endpoint, fiqa_judged_args};
use crate::{command, rageval, repo_root, stderr};

/// A tmpfs of a given size on a fresh temporary directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// A tmpfs of `kib` KiB, or `None` (with the reason on stderr) where mounting fails.
    #[allow(
        clippy::print_stderr,
        reason = "a skipped test says why in the test output"
    )]
    fn mount(kib: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let size = format!("size={kib}k");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &size, "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(output) if output.status.success() => Some(Tmpfs { dir }),
            Ok(output) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs (needs root): {}",
                    stderr(&output)
                );
                None
            }
            Err(error) => {
                eprintln!("skipped: cannot run mount: {error}");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Space comes back: the tmpfs grows to `kib` KiB, its files kept.
    fn grow(&self, kib: u64) {
        let size = format!("remount,size={kib}k");
        let status = Command::new("mount")
            .args(["-o", &size])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// The journal's complete lines.
fn journal_lines(run: &Path) -> Vec<String> {
    let text = fs::read_to_string(run.join("results.jsonl")).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete.lines().map(str::to_owned).collect()
}

fn assert_disk_full(output: &Output, case: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(74), "{case}: {message}");
    assert!(message.contains("disk full"), "{case}: {message}");
    assert!(!message.contains("panicked"), "{case}: {message}");
}

#[test]
fn regression_issue_40_a_full_disk_keeps_the_journal_exits_74_and_the_run_resumes() {
    let endpoint = endpoint(MockConfig::default());
    let dir = tempfile::tempdir().unwrap();
    let eval = |out: &Path| -> Output {
        let args = fiqa_judged_args(out.to_str().unwrap(), &endpoint.flags());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        command(dir.path(), &args).output().unwrap()
    };
    // Every answer in the cache first: the runs on the small disk ask no model, so what
    // they journal is kept because the disk filled, not because a model was paid.
    let warm = eval(&dir.path().join("warm"));
    assert!(warm.status.success(), "{}", stderr(&warm));
    let mut resumed = false;
    for kib in [24, 40, 64, 100] {
        let Some(disk) = Tmpfs::mount(kib) else {
            return;
        };
        let run: PathBuf = disk.path().join("run");
        let full = eval(&run);
        if full.status.success() {
            continue;
        }
        let case = format!("{kib} KiB");
        assert_disk_full(&full, &case);
        let kept = journal_lines(&run);
        if kept.is_empty() {
            // The disk filled before the first cell (the manifest did not fit).
            continue;
        }
        assert!(
            run.join("manifest.json").is_file(),
            "{case}: the manifest is kept"
        );
        disk.grow(16 * 1024);
        let again = eval(&run);
        assert!(again.status.success(), "{case}: {}", stderr(&again));
        let cells = checked_cells(&run, 30, 2);
        let written: Vec<String> = cells.iter().map(ToString::to_string).collect();
        for line in &kept {
            let line: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(
                written.contains(&line.to_string()),
                "{case}: a journaled cell is kept as it was: {line}"
            );
        }
        resumed = true;
    }
    assert!(resumed, "no disk size filled up mid-journal");
}

#[test]
fn regression_issue_40_reports_on_a_full_disk_are_whole_or_absent_and_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let finished = dir.path().join("finished");
    let data = repo_root().join("examples/fiqa-30.jsonl");
    let output = rageval(
        dir.path(),
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "exact_match,rouge_l",
            "--out",
            finished.to_str().unwrap(),
            "--no-reports",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run_files = ["manifest.json", "results.jsonl", "summary.json"];
    let pages = |file: &str| {
        fs::metadata(finished.join(file))
            .unwrap()
            .len()
            .div_ceil(4096)
    };
    let run_kib: u64 = run_files.iter().map(|file| pages(file) * 4).sum::<u64>() + 8;
    let mut full_disks = 0;
    for free_kib in [4, 12, 24, 48, 96, 160, 240] {
        let Some(disk) = Tmpfs::mount(run_kib + free_kib) else {
            return;
        };
        let run = disk.path().join("run");
        fs::create_dir(&run).unwrap();
        for file in run_files {
            fs::copy(finished.join(file), run.join(file)).unwrap();
        }
        let written = rageval(dir.path(), &["report", run.to_str().unwrap()]);
        let case = format!("{free_kib} KiB free");
        if !written.status.success() {
            assert_disk_full(&written, &case);
            full_disks += 1;
        }
        if let Ok(html) = fs::read_to_string(run.join("report.html")) {
            assert!(
                html.trim_end().ends_with("</html>"),
                "{case}: a truncated page"
            );
        }
        if let Ok(markdown) = fs::read_to_string(run.join("report.md")) {
            assert!(!markdown.is_empty(), "{case}: an empty report.md");
        }
        if run.join("results.xlsx").exists() {
            let workbook: Result<Xlsx<_>, _> = open_workbook(run.join("results.xlsx"));
            let mut workbook =
                workbook.unwrap_or_else(|e| panic!("{case}: a broken workbook: {e}"));
            assert!(workbook.worksheet_range("results").is_ok(), "{case}");
        }
        let left: Vec<String> = fs::read_dir(&run)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{case}: temporary files left: {left:?}");
    }
    assert!(
        full_disks > 0,
        "no disk size filled up while reports were written"
    );
}
