//! `compare RUN… --pairwise DIR`: a `pairwise` run of the compared versions adds each later
//! version's head-to-head result against the first to the version table — on stdout, in
//! the HTML and Markdown files and in the workbook — whether the pairwise run read the run
//! directories or their datasets; a pairwise run of other versions is refused with exit 2.

use std::fs;
use std::path::{Path, PathBuf};

use crate::pairwise::{prefers_good, version};
use crate::{rageval, stderr, stdout};

fn eval(dir: &Path, data: &Path, name: &str) -> PathBuf {
    let out = dir.join("runs").join(name);
    let output = rageval(
        dir,
        &[
            "eval",
            data.to_str().unwrap(),
            "--metrics",
            "rouge_l",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    out
}

fn pairwise(dir: &Path, versions: &[&Path], out: &Path, flags: &[String]) {
    let mut args = vec!["pairwise"];
    args.extend(versions.iter().map(|v| v.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap()]);
    args.extend(flags.iter().map(String::as_str));
    let output = rageval(dir, &args);
    assert!(output.status.success(), "{}", stderr(&output));
}

/// Three versions' datasets (v2's answers carry GOOD: the judge prefers them in both
/// seats; v1 and v3 tie) and their `eval` runs.
fn three_versions(d: &Path) -> ([PathBuf; 3], [PathBuf; 3]) {
    let data = [
        version(d, "v1", false, 0),
        version(d, "v2", true, 0),
        version(d, "v3", false, 1),
    ];
    let runs = [0, 1, 2].map(|i| eval(d, &data[i], &format!("v{}", i + 1)));
    (data, runs)
}

#[test]
fn the_version_table_gains_each_version_s_head_to_head_result_against_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (data, runs) = three_versions(d);
    let server = crate::judged::endpoint(prefers_good());
    let flags = server.flags();
    let by_runs = d.join("h2h-runs");
    let run_paths: Vec<&Path> = runs.iter().map(PathBuf::as_path).collect();
    pairwise(d, &run_paths, &by_runs, &flags);
    // The same versions given as their datasets.
    let by_data = d.join("h2h-data");
    let data_paths: Vec<&Path> = data.iter().map(PathBuf::as_path).collect();
    pairwise(d, &data_paths, &by_data, &flags);

    for h2h in [&by_runs, &by_data] {
        let (html, xlsx) = (d.join("compare.html"), d.join("compare.xlsx"));
        let mut args: Vec<&str> = runs.iter().map(|r| r.to_str().unwrap()).collect();
        args.insert(0, "compare");
        args.extend(["--pairwise", h2h.to_str().unwrap()]);
        args.extend([
            "--html",
            html.to_str().unwrap(),
            "--xlsx",
            xlsx.to_str().unwrap(),
        ]);
        let output = rageval(d, &args);
        assert!(output.status.success(), "{}", stderr(&output));
        let table = stdout(&output);
        assert!(table.contains("| head to head vs v1 |"), "{table}");
        let row = |name: &str| {
            table
                .lines()
                .find(|l| l.starts_with(&format!("| {name} |")))
                .unwrap_or_default()
                .to_owned()
        };
        assert!(row("v1").ends_with("| — |"), "{table}");
        assert!(
            row("v2").contains("6 wins, 0 ties, 0 losses; win rate 1.000"),
            "{table}"
        );
        assert!(
            row("v3").contains("0 wins, 6 ties, 0 losses; win rate 0.500"),
            "{table}"
        );
        let page = fs::read_to_string(&html).unwrap();
        assert!(page.contains("<th>head to head vs v1</th>"), "{page}");
        assert!(page.contains("6 wins, 0 ties, 0 losses"), "{page}");

        use calamine::{Data, Reader, Xlsx, open_workbook};
        let mut workbook: Xlsx<_> = open_workbook(&xlsx).unwrap();
        let sheet = workbook.worksheet_range("versions").unwrap();
        let header = crate::pairwise::first_row(&sheet);
        let wins = header
            .iter()
            .position(|h| h == "h2h wins")
            .expect("h2h columns");
        assert_eq!(header[wins + 3], "h2h win_rate");
        assert_eq!(sheet.get_value((2, wins as u32)), Some(&Data::Float(6.0)));
        assert_eq!(
            sheet.get_value((3, wins as u32 + 1)),
            Some(&Data::Float(6.0))
        );
        assert_eq!(sheet.get_value((1, wins as u32)), Some(&Data::Empty));
    }
}

#[test]
fn a_pairwise_run_of_other_versions_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, [v1, v2, v3]) = three_versions(d);
    let server = crate::judged::endpoint(prefers_good());
    let h2h = d.join("h2h");
    pairwise(d, &[&v1, &v3], &h2h, &server.flags());
    let compare = |pairwise: &Path| {
        let [a, b, p] = [&v1, &v2, pairwise].map(|p| p.to_str().unwrap());
        rageval(d, &["compare", a, b, "--pairwise", p])
    };
    let output = compare(&h2h);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(
        text.contains("the pairwise run does not match the compared runs"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{} is not a version of the pairwise run",
            v2.display()
        )),
        "{text}"
    );
    // A directory that is no pairwise run at all.
    let output = compare(&v3);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is not a pairwise run"),
        "{}",
        stderr(&output)
    );
}
