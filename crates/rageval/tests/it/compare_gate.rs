//! `rageval compare BASELINE CANDIDATE --gate` end to end (issue 36, items 3 and 4): real
//! run directories scored by `rageval eval` with the heuristic judge (no model) over
//! `examples/fiqa-30.jsonl` and variants of it. Identical runs pass with "no significant
//! change"; a candidate that answers "I don't know" on half the questions fails, naming the
//! metrics with their intervals; the other way round it passes as "improved"; the
//! pull-request comment carries its marker, the verdict and the moved questions.
//!
//! The checks read verdicts, metric names and the shape of the lines, never a score's
//! digits (the comment's snapshot pins the whole text on purpose).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::snapshots::with_filters;
use crate::{rageval, repo_root, stderr, stdout};

/// Metrics the heuristic judge scores without a model, each moved by an abstaining answer.
pub(crate) const METRICS: &str = "faithfulness,rouge_l,chrf";
/// Every metric gated, with small minimal effects.
pub(crate) const GATE: &str = "faithfulness=0.02,rouge_l=0.02,chrf=0.02";

/// `examples/fiqa-30.jsonl` written to `dir/name`, every second answer replaced by
/// "I don't know." when `abstain_on_half`.
pub(crate) fn dataset(dir: &Path, name: &str, abstain_on_half: bool) -> PathBuf {
    let text = fs::read_to_string(repo_root().join("examples/fiqa-30.jsonl")).unwrap();
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let mut sample: Value = serde_json::from_str(line).unwrap();
            if abstain_on_half && i % 2 == 0 {
                sample["response"] = Value::String("I don't know.".into());
            }
            sample.to_string()
        })
        .collect();
    let path = dir.join(name);
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Scores `data` into `dir/runs/name` with the heuristic judge, with `extra` flags.
fn eval_with(dir: &Path, data: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join("runs").join(name);
    let mut args = vec![
        "eval",
        data.to_str().unwrap(),
        "--metrics",
        METRICS,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = rageval(dir, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    out
}

fn eval(dir: &Path, data: &Path, name: &str) -> PathBuf {
    eval_with(dir, data, name, &[])
}

/// Three runs: `base` over fiqa-30, `same` over an identical copy, `idk` with half the
/// answers abstaining.
fn runs(dir: &Path) -> [PathBuf; 3] {
    let original = dataset(dir, "v1.jsonl", false);
    let copy = dataset(dir, "v1-copy.jsonl", false);
    let abstaining = dataset(dir, "v2.jsonl", true);
    [
        eval(dir, &original, "base"),
        eval(dir, &copy, "same"),
        eval(dir, &abstaining, "idk"),
    ]
}

fn gate(dir: &Path, baseline: &Path, candidate: &Path, extra: &[&str]) -> Output {
    gate_with(dir, baseline, candidate, GATE, extra)
}

/// `compare BASELINE CANDIDATE --gate SPEC` with `extra` flags.
fn gate_with(dir: &Path, baseline: &Path, candidate: &Path, spec: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "compare",
        baseline.to_str().unwrap(),
        candidate.to_str().unwrap(),
        "--gate",
        spec,
        "--permutations",
        "999",
    ];
    args.extend_from_slice(extra);
    rageval(dir, &args)
}

/// The gate's lines of stdout (after the comparison's tables).
fn gate_lines(output: &Output) -> String {
    let out = stdout(output);
    out.split_once("\ngate: ")
        .map(|(_, gate)| format!("gate: {gate}"))
        .unwrap_or_else(|| panic!("no gate line in: {out}"))
}

#[test]
fn the_gate_passes_identical_runs_fails_a_real_drop_and_names_an_improvement() {
    let dir = tempfile::tempdir().unwrap();
    let [base, same, idk] = runs(dir.path());

    let identical = gate(dir.path(), &base, &same, &[]);
    assert_eq!(identical.status.code(), Some(0), "{}", stderr(&identical));
    let lines = gate_lines(&identical);
    assert_eq!(
        lines.lines().next(),
        Some("gate: no significant change"),
        "{lines}"
    );
    assert!(
        lines.contains("  rouge_l: unchanged (") && lines.contains("— no significant change"),
        "{lines}"
    );
    assert!(
        stderr(&identical).contains("gate: the baseline finished "),
        "{}",
        stderr(&identical)
    );

    let comment = dir.path().join("comment.md");
    let dropped = gate(
        dir.path(),
        &base,
        &idk,
        &["--comment", comment.to_str().unwrap()],
    );
    assert_eq!(dropped.status.code(), Some(1), "{}", stderr(&dropped));
    let lines = gate_lines(&dropped);
    assert!(
        lines.starts_with(
            "gate: regression: idk significantly worse than base by more than the minimal \
             effect ("
        ),
        "{lines}"
    );
    // The heuristic judge's faithfulness of "I don't know." is noisy (it has no claim to
    // support); the two answer-against-reference metrics drop clearly.
    for metric in ["rouge_l", "chrf"] {
        let line = lines
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{metric}: down ")))
            .unwrap_or_else(|| panic!("{metric} not named: {lines}"));
        assert!(line.contains(", 95% interval [-"), "{line}");
        assert!(line.contains(", Holm p "), "{line}");
        assert!(
            line.ends_with("— regressed (minimal effect 0.02)"),
            "{line}"
        );
    }
    assert!(
        lines.contains("regressed (minimal effect 0.02)\n") && lines.contains("(rouge_l, chrf)"),
        "{lines}"
    );
    let text = fs::read_to_string(&comment).unwrap();
    assert!(text.starts_with("<!-- rageval-gate -->\n"), "{text}");

    // The same two runs the other way round: every metric improved.
    let improved = gate(dir.path(), &idk, &base, &[]);
    assert_eq!(improved.status.code(), Some(0), "{}", stderr(&improved));
    assert_eq!(
        gate_lines(&improved).lines().next().unwrap(),
        "gate: improved: rouge_l, chrf"
    );

    // A gate that must refuse a mismatch: these runs were judged alike, so it gates.
    let strict = gate(dir.path(), &base, &idk, &["--gate-strict"]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));

    // A candidate scored over its top context only: judged differently. The gate warns,
    // or refuses with --gate-strict.
    let data = dataset(dir.path(), "v1-top1.jsonl", false);
    let top1 = eval_with(dir.path(), &data, "top1", &["--top-k", "1"]);
    let warned = gate(dir.path(), &base, &top1, &[]);
    assert_ne!(warned.status.code(), Some(2), "{}", stderr(&warned));
    assert!(
        stderr(&warned).contains("warning: gate: judged differently: settings (top_k all → 1)"),
        "{}",
        stderr(&warned)
    );
    let refused = gate(dir.path(), &base, &top1, &["--gate-strict"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("the gate refuses to compare top1 with base: judged differently"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn the_comment_carries_the_marker_the_verdict_and_the_moved_questions() {
    let dir = tempfile::tempdir().unwrap();
    let original = dataset(dir.path(), "v1.jsonl", false);
    let abstaining = dataset(dir.path(), "v2.jsonl", true);
    let base = eval(dir.path(), &original, "base");
    let idk = eval(dir.path(), &abstaining, "idk");
    let comment = dir.path().join("comment.md");
    let output = gate(
        dir.path(),
        &base,
        &idk,
        &[
            "--comment",
            comment.to_str().unwrap(),
            "--report-url",
            "https://ci.example/runs/1",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = fs::read_to_string(&comment).unwrap();
    // Written whole: nothing but the comment is left beside it.
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("comment"))
        .collect();
    assert_eq!(names, ["comment.md"]);
    assert!(text.contains("| sample | question | metric |"), "{text}");
    assert!(
        text.contains("Challenged an apparently bogus credit card charge"),
        "{text}"
    );
    // The baseline's age depends on when the test runs.
    let comment = age_masked(&text);
    with_filters(dir.path(), || {
        insta::assert_snapshot!("gate_comment", comment)
    });
}

/// The comment with its baseline-age line's duration masked.
fn age_masked(text: &str) -> String {
    text.lines()
        .map(|line| match line.split_once("Z, ") {
            Some((head, tail)) if tail.ends_with(" ago  ") => format!("{head}Z, [AGE] ago  "),
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn bad_gate_settings_name_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path(), "v1.jsonl", false);
    let base = eval(dir.path(), &data, "base");
    let file = dir.path().join("gate.toml");
    fs::write(
        &file,
        "level = 0.05\n[minimal_effect]\nrouge_l = \"small\"\n",
    )
    .unwrap();
    let output = rageval(
        dir.path(),
        &[
            "compare",
            base.to_str().unwrap(),
            base.to_str().unwrap(),
            "--gate",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("gate.toml:3: "),
        "{}",
        stderr(&output)
    );
    let unknown = rageval(
        dir.path(),
        &[
            "compare",
            base.to_str().unwrap(),
            base.to_str().unwrap(),
            "--gate",
            "faithfulnes=0.02",
        ],
    );
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("--gate names `faithfulnes`, which is not a metric"),
        "{}",
        stderr(&unknown)
    );
}

/// With a pairwise run of the baseline against the candidate, the candidate's head-to-head
/// win rate is gated too: a judge that prefers the baseline's answers on every question (the
/// testkit mock, following the answers' content in both seat orders) fails the gate.
#[test]
fn a_candidate_that_loses_head_to_head_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let better = crate::pairwise::version(dir.path(), "good", true, 0);
    let worse = crate::pairwise::version(dir.path(), "plain", false, 0);
    let base = eval(dir.path(), &better, "base");
    let candidate = eval(dir.path(), &worse, "cand");
    let server = crate::judged::endpoint(crate::pairwise::prefers_good());
    let h2h = dir.path().join("h2h");
    let flags = server.flags();
    let pairwise = |first: &Path, second: &Path, out: &Path| {
        let mut args = vec![
            "pairwise",
            first.to_str().unwrap(),
            second.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(flags.iter().map(String::as_str));
        let output = rageval(dir.path(), &args);
        assert!(output.status.success(), "{}", stderr(&output));
    };
    pairwise(&base, &candidate, &h2h);

    let comment = dir.path().join("comment.md");
    let output = gate_with(
        dir.path(),
        &base,
        &candidate,
        "head_to_head=0.1",
        &[
            "--gate-pairwise",
            h2h.to_str().unwrap(),
            "--comment",
            comment.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let lines = gate_lines(&output);
    // Six questions, all lost in both orders: win rate 0, sign test p = 2 / 2⁶.
    assert!(
        lines.contains(
            "head_to_head: win rate 0.0000, 95% interval [0.0000, 0.0000], p 0.0313, Holm p \
             0.0313 (level 0.05) — regressed (minimal effect 0.1)"
        ),
        "{lines}"
    );
    let text = fs::read_to_string(&comment).unwrap();
    assert!(
        text.contains("**Head to head** (cand against base, both seat orders): 0 wins, 0 ties, 6 losses over 6 questions"),
        "{text}"
    );

    // A pairwise run with the candidate first would be read from the wrong side: refused.
    let reversed = dir.path().join("h2h-reversed");
    pairwise(&candidate, &base, &reversed);
    let refused = gate_with(
        dir.path(),
        &base,
        &candidate,
        "head_to_head=0.1",
        &["--gate-pairwise", reversed.to_str().unwrap()],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("the pairwise run judged the candidate"),
        "{}",
        stderr(&refused)
    );
}

/// `scripts/ci/gate.sh`, the CI step of docs/ci.md, run against two run directories with
/// nothing sent (`RAGEVAL_GATE_DRY=1`): compare's exit code, the comment, and the upsert
/// requests it would send, by the comment's marker.
#[test]
fn the_ci_gate_script_writes_the_comment_and_the_upsert_it_would_send() {
    let dir = tempfile::tempdir().unwrap();
    let original = dataset(dir.path(), "v1.jsonl", false);
    let abstaining = dataset(dir.path(), "v2.jsonl", true);
    let base = eval(dir.path(), &original, "base");
    let idk = eval(dir.path(), &abstaining, "idk");
    let run_script = |candidate: &Path, comment: &str| {
        std::process::Command::new("bash")
            .arg(repo_root().join("scripts/ci/gate.sh"))
            .args([base.to_str().unwrap(), candidate.to_str().unwrap(), comment])
            .current_dir(dir.path())
            .env("RAGEVAL_BIN", env!("CARGO_BIN_EXE_rageval"))
            .env("RAGEVAL_GATE", GATE)
            .env("RAGEVAL_GATE_DRY", "1")
            .env("GITHUB_REPOSITORY", "acme/rag")
            .env("PR_NUMBER", "7")
            .env("NO_COLOR", "1")
            .env("RAGEVAL_CACHE_DIR", dir.path().join(".cache"))
            .output()
            .unwrap()
    };
    let failed = run_script(&idk, "gate.md");
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let comment = fs::read_to_string(dir.path().join("gate.md")).unwrap();
    assert!(comment.starts_with("<!-- rageval-gate -->\n**rageval gate ❌ regression:"));
    let request = fs::read_to_string(dir.path().join("gate.md.request")).unwrap();
    assert!(
        request.starts_with(
            "gh api repos/acme/rag/issues/7/comments --paginate --jq .[] | select(.body | \
             startswith(\"<!-- rageval-gate -->\")) | .id\n"
        ),
        "{request}"
    );
    assert!(
        request
            .contains("gh api --method PATCH repos/acme/rag/issues/comments/ID -F body=@gate.md\n")
    );
    assert!(
        request
            .contains("gh api --method POST repos/acme/rag/issues/7/comments -F body=@gate.md\n")
    );

    let passed = run_script(&base, "same.md");
    assert_eq!(passed.status.code(), Some(0), "{}", stderr(&passed));
    assert!(
        fs::read_to_string(dir.path().join("same.md"))
            .unwrap()
            .contains("**rageval gate ✅ no significant change**")
    );
}
