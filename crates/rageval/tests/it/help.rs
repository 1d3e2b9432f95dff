//! The `--help` of every command that writes a run or reads a dataset, pinned: their flags
//! are declared once and flattened into each command, so a change of words in one place
//! shows here in every command it reaches; `compare`'s pins its regression gate's flags. To accept a changed text on purpose:
//! `INSTA_UPDATE=always cargo test -p rageval --test it help`, then read the diff.

use crate::snapshots::with_filters;
use crate::{rageval, stderr, stdout};

#[test]
fn the_help_of_each_command_with_run_or_dataset_flags() {
    let dir = tempfile::tempdir().unwrap();
    with_filters(dir.path(), || {
        for command in [
            "eval",
            "rank",
            "pairwise",
            "reference",
            "pipeline",
            "testset",
            "judge-check",
            "collect",
            "compare",
        ] {
            let output = rageval(dir.path(), &[command, "--help"]);
            assert!(output.status.success(), "{command}: {}", stderr(&output));
            insta::assert_snapshot!(format!("help_{command}"), stdout(&output));
        }
    });
}
