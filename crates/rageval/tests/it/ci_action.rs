//! The rageval-gate GitHub Action (`.github/actions/rageval-gate/action.yml`, issue 36
//! item 4) run here as GitHub would run it, without GitHub and without the network: its
//! steps read from the file by a line reader, each shell step's `run:` line run by bash in
//! the order listed, with its `env:` block's values given by this test (every name the
//! file uses must have one here) and `RAGEVAL_GATE_DRY=1`, so the `gh` calls are written
//! down instead of sent. First as a push to main (the gate's steps skipped: main's run is
//! what later pull requests download), then as a pull request whose answers abstain on
//! half the questions: the gate fails it with exit 1, the comment and the requests that
//! would download the baseline and upsert the comment are written.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::compare_gate::{GATE, METRICS, dataset};
use crate::{repo_root, stderr, stdout};

/// The condition of the steps that run on pull requests only.
const ON_PULL_REQUEST: &str = "github.event_name == 'pull_request'";

/// One step of the composite action.
#[derive(Debug, Default)]
struct Step {
    name: String,
    condition: Option<String>,
    env: Vec<(String, String)>,
    run: Option<String>,
    uses: Option<String>,
}

/// The steps of `action.yml`: a line reader for the one file we own, which keeps each
/// `run:` on one line and each `env:` value on its own line (its header says so).
fn steps(yml: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let (mut in_steps, mut in_env) = (false, false);
    for line in yml.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line == "  steps:" {
            in_steps = true;
            continue;
        }
        if !in_steps {
            continue;
        }
        if let Some(name) = line.strip_prefix("    - name: ") {
            steps.push(Step {
                name: name.to_owned(),
                ..Step::default()
            });
            in_env = false;
            continue;
        }
        let step = steps.last_mut().expect("a step opens with `- name:`");
        if let Some(entry) = line.strip_prefix("        ") {
            if in_env {
                let (key, value) = entry.split_once(": ").expect("`KEY: value` under env:");
                step.env.push((key.to_owned(), value.to_owned()));
            }
            continue;
        }
        let field = line
            .strip_prefix("      ")
            .unwrap_or_else(|| panic!("a line outside any step field: {line}"));
        in_env = field == "env:";
        if let Some(run) = field.strip_prefix("run: ") {
            step.run = Some(unquoted(run));
        } else if let Some(uses) = field.strip_prefix("uses: ") {
            step.uses = Some(uses.to_owned());
        } else if let Some(condition) = field.strip_prefix("if: ") {
            step.condition = Some(condition.to_owned());
        }
    }
    steps
}

/// A YAML scalar without its single quotes (`''` inside standing for one quote).
fn unquoted(scalar: &str) -> String {
    match scalar
        .strip_prefix('\'')
        .and_then(|inner| inner.strip_suffix('\''))
    {
        Some(inner) => inner.replace("''", "'"),
        None => scalar.to_owned(),
    }
}

/// One CI job: its workspace (the working directory), its runner's temporary directory,
/// the event, and the data it evaluates.
struct Job<'a> {
    workspace: PathBuf,
    runner_temp: PathBuf,
    pull_request: bool,
    data: &'a Path,
    /// The run main's job uploaded, standing for the artifact a pull request downloads.
    baseline: &'a Path,
}

impl Job<'_> {
    /// The value this job gives the environment variable `name` of a step.
    fn value(&self, name: &str) -> String {
        let temp = |file: &str| self.runner_temp.join(file).display().to_string();
        match name {
            "RAGEVAL_INSTALL" => "path".into(),
            "RAGEVAL_SOURCE" => repo_root().display().to_string(),
            "RAGEVAL_DATA" => self.data.display().to_string(),
            "RAGEVAL_METRICS" => METRICS.into(),
            "RAGEVAL_RUN_DIR" => "runs/candidate".into(),
            "RAGEVAL_EVAL_ARGS" => "--bootstrap-resamples 200".into(),
            "RAGEVAL_BASELINE_DIR" => temp("rageval-baseline"),
            "RAGEVAL_BASELINE_ARTIFACT" => "rageval-run".into(),
            "RAGEVAL_BASELINE_WORKFLOW" => "rag-eval".into(),
            "RAGEVAL_BASELINE_BRANCH" => "main".into(),
            "GITHUB_REPOSITORY" => "acme/rag".into(),
            "GH_TOKEN" => "never-sent".into(),
            "RAGEVAL_GATE" => GATE.into(),
            "RAGEVAL_CONFIRM" => String::new(),
            "RAGEVAL_CONFIRM_OUT" => temp("rageval-confirm"),
            "RAGEVAL_REPORT_URL" => "https://ci.example/runs/1".into(),
            "PR_NUMBER" => "7".into(),
            other => panic!("action.yml sets {other}, which this test gives no value"),
        }
    }

    /// Runs the action's steps in order as this job; each shell step's output, by name.
    fn run(&self, steps: &[Step]) -> Vec<(String, Output)> {
        fs::create_dir_all(&self.workspace).unwrap();
        fs::create_dir_all(&self.runner_temp).unwrap();
        let mut outputs = Vec::new();
        for step in steps {
            let runs = match step.condition.as_deref() {
                None => true,
                Some(ON_PULL_REQUEST) => self.pull_request,
                Some(other) => panic!(
                    "step {}: a condition this test cannot read: {other}",
                    step.name
                ),
            };
            let Some(script) = step.run.as_deref().filter(|_| runs) else {
                continue;
            };
            assert!(
                !script.contains("${{"),
                "step {}: an expression in run:",
                step.name
            );
            // A clean environment: no judge from the caller's, the cache in the runner's
            // temporary directory.
            let mut command = std::process::Command::new("bash");
            command
                .args(["-c", script])
                .current_dir(&self.workspace)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", &self.runner_temp)
                .env("NO_COLOR", "1")
                .env("RAGEVAL_CACHE_DIR", self.runner_temp.join(".cache"))
                .env(
                    "GITHUB_ACTION_PATH",
                    repo_root().join(".github/actions/rageval-gate"),
                )
                .env("RUNNER_TEMP", &self.runner_temp)
                .env("RAGEVAL_BIN", env!("CARGO_BIN_EXE_rageval"))
                .env("RAGEVAL_GATE_DRY", "1")
                .env("RAGEVAL_GATE_DRY_BASELINE", self.baseline);
            for (key, _) in &step.env {
                command.env(key, self.value(key));
            }
            let output = command.output().unwrap();
            let failed = !output.status.success();
            outputs.push((step.name.clone(), output));
            if failed {
                break;
            }
        }
        outputs
    }
}

#[test]
fn the_actions_steps_run_in_order_against_two_run_directories() {
    let yml =
        fs::read_to_string(repo_root().join(".github/actions/rageval-gate/action.yml")).unwrap();
    let steps = steps(&yml);
    let listed: Vec<(&str, Option<&str>)> = steps
        .iter()
        .map(|s| {
            let what = s.run.as_deref().or(s.uses.as_deref());
            let script = what.map(|w| w.split("scripts/ci/").nth(1).unwrap_or(w));
            (
                s.name.as_str(),
                script.map(|s| s.split('"').next().unwrap_or(s)),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("Install rageval", Some("install.sh")),
            ("Evaluate this version's answers", Some("evaluate.sh")),
            ("Upload the run", Some("actions/upload-artifact@v4")),
            (
                "Download the baseline run of the default branch",
                Some("download-baseline.sh")
            ),
            (
                "Compare with the gate and upsert the comment",
                Some("gate.sh")
            ),
        ]
    );

    let dir = tempfile::tempdir().unwrap();
    let original = dataset(dir.path(), "v1.jsonl", false);
    let abstaining = dataset(dir.path(), "v2.jsonl", true);
    let main_workspace = dir.path().join("main");
    let main_run = main_workspace.join("runs/candidate");
    let main = Job {
        workspace: main_workspace.clone(),
        runner_temp: dir.path().join("main-temp"),
        pull_request: false,
        data: &original,
        baseline: &main_run,
    };
    let ran = main.run(&steps);
    let names: Vec<&str> = ran.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        ["Install rageval", "Evaluate this version's answers"]
    );
    for (name, output) in &ran {
        assert!(output.status.success(), "{name}: {}", stderr(output));
    }
    assert!(
        stdout(&ran[0].1).starts_with("rageval "),
        "{}",
        stdout(&ran[0].1)
    );
    assert!(main_run.join("manifest.json").is_file());

    let pr = Job {
        workspace: dir.path().join("pr"),
        runner_temp: dir.path().join("pr-temp"),
        pull_request: true,
        data: &abstaining,
        baseline: &main_run,
    };
    let ran = pr.run(&steps);
    assert_eq!(ran.len(), 4, "every shell step ran");
    for (name, output) in &ran[..3] {
        assert!(output.status.success(), "{name}: {}", stderr(output));
    }
    let (name, gate) = &ran[3];
    assert_eq!(gate.status.code(), Some(1), "{name}: {}", stderr(gate));
    assert!(
        stdout(gate).contains("gate: regression: candidate significantly worse than"),
        "{}",
        stdout(gate)
    );
    let temp = &pr.runner_temp;
    assert!(temp.join("rageval-baseline/manifest.json").is_file());
    let download = fs::read_to_string(temp.join("rageval-baseline.request")).unwrap();
    assert!(
        download.starts_with(
            "gh run list --repo acme/rag --branch main --workflow rag-eval --status success \
             --limit 1 --json databaseId --jq .[0].databaseId\n"
        ),
        "{download}"
    );
    assert!(download.contains("gh run download RUN_ID --repo acme/rag --name rageval-run"));
    let comment = fs::read_to_string(temp.join("rageval-gate.md")).unwrap();
    assert!(
        comment.starts_with("<!-- rageval-gate -->\n**rageval gate ❌ regression:"),
        "{comment}"
    );
    assert!(comment.contains("https://ci.example/runs/1"), "{comment}");
    let upsert = fs::read_to_string(temp.join("rageval-gate.md.request")).unwrap();
    assert!(upsert.contains("gh api --method POST repos/acme/rag/issues/7/comments"));
}
