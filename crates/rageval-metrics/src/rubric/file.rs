//! The rubric file format: the `[[metric]]` tables of `rageval.toml` or of a
//! `--metric-file` (docs/rubrics.md), parsed into [`DefinedRubric`]s with every error
//! naming the file, the line and the field.
//!
//! Other tables of those files (`[judge]`, prices) belong to the judge's settings and are
//! ignored here. This module reads the files it is given and nothing else: which files a
//! run reads (`--metric-file`, else the judge's configuration file) is decided where the
//! judge settings are resolved, in `rageval-run`, so the CLI and Python choose alike.

use std::path::{Path, PathBuf};

use rageval_core::position::{field_in_message, line_of};
use rageval_tasks::{Rubric, RubricExample, RubricField, RubricScale};
use serde::Deserialize;
use toml::Spanned;

use super::{DefinedRubric, RubricError};

#[derive(Deserialize)]
struct Root {
    #[serde(default)]
    metric: Vec<Spanned<FileRubric>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRubric {
    name: Spanned<String>,
    #[serde(default)]
    summary: Option<String>,
    criterion: Spanned<FileCriterion>,
    reads: Spanned<Vec<Spanned<String>>>,
    scale: Spanned<String>,
    #[serde(default)]
    examples: Vec<Spanned<FileExample>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum FileCriterion {
    One(String),
    PerPack(PerPack),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PerPack {
    en: String,
    #[serde(default)]
    zh: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileExample {
    #[serde(default)]
    question: Option<String>,
    #[serde(default)]
    answer: Option<String>,
    #[serde(default)]
    contexts: Option<Vec<String>>,
    #[serde(default)]
    reference: Option<String>,
    grade: Spanned<FileGrade>,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum FileGrade {
    Word(String),
    Number(i64),
}

/// The `[[metric]]` tables of every file in `files`, in order; a file without any gives
/// none.
pub fn load(files: &[PathBuf]) -> Result<Vec<DefinedRubric>, RubricError> {
    let mut rubrics = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|source| RubricError::Read {
            file: file.clone(),
            source,
        })?;
        rubrics.extend(parse(&text, file)?);
    }
    Ok(rubrics)
}

/// The `[[metric]]` tables of one file.
pub fn parse(text: &str, file: &Path) -> Result<Vec<DefinedRubric>, RubricError> {
    let error =
        |span: std::ops::Range<usize>, field: String, message: String| RubricError::Invalid {
            file: file.to_path_buf(),
            line: Some(line_of(text, span.start)),
            field,
            message,
        };
    let root: Root = toml::from_str(text).map_err(|parse| {
        let message = parse.message().to_owned();
        let field = field_in_message(&message).unwrap_or("metric").to_owned();
        RubricError::Invalid {
            file: file.to_path_buf(),
            line: parse.span().map(|span| line_of(text, span.start)),
            field,
            message,
        }
    })?;
    let mut out = Vec::new();
    for (index, table) in root.metric.into_iter().enumerate() {
        let at = |field: &str| format!("metric[{}].{field}", index + 1);
        let header_line = line_of(text, table.span().start);
        let table = table.into_inner();

        let name = table.name.get_ref().trim().to_owned();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(error(
                table.name.span(),
                at("name"),
                "a metric name is letters, digits, `_` and `-` (no spaces, `:` or `@`)".into(),
            ));
        }

        let (criterion_en, criterion_zh) = match table.criterion.get_ref() {
            FileCriterion::One(text) => (text.clone(), None),
            FileCriterion::PerPack(pack) => (pack.en.clone(), pack.zh.clone()),
        };
        if criterion_en.trim().is_empty()
            || criterion_zh.as_ref().is_some_and(|t| t.trim().is_empty())
        {
            return Err(error(
                table.criterion.span(),
                at("criterion"),
                "the criterion is empty; write what a good sample does".into(),
            ));
        }

        let scale = RubricScale::from_name(table.scale.get_ref()).ok_or_else(|| {
            error(
                table.scale.span(),
                at("scale"),
                format!(
                    "unknown scale `{}`; hint: use \"pass_fail\" or \"1-5\"",
                    table.scale.get_ref()
                ),
            )
        })?;

        let mut reads = Vec::new();
        for field in table.reads.get_ref() {
            let parsed = RubricField::from_name(field.get_ref().trim()).ok_or_else(|| {
                error(
                    field.span(),
                    at("reads"),
                    format!(
                        "unknown field `{}`; hint: question, answer, contexts or reference",
                        field.get_ref()
                    ),
                )
            })?;
            if !reads.contains(&parsed) {
                reads.push(parsed);
            }
        }
        if reads.is_empty() {
            return Err(error(
                table.reads.span(),
                at("reads"),
                "name at least one field the judge reads (question, answer, contexts, reference)"
                    .into(),
            ));
        }
        reads.sort_by_key(|field| RubricField::ALL.iter().position(|f| f == field));

        let mut examples = Vec::new();
        for (number, example) in table.examples.into_iter().enumerate() {
            let example_span = example.span();
            let example = example.into_inner();
            let field =
                |name: &str| format!("metric[{}].examples[{}].{name}", index + 1, number + 1);
            let grade = match (scale, example.grade.get_ref()) {
                (RubricScale::PassFail, FileGrade::Word(word)) if word == "pass" => Some(1),
                (RubricScale::PassFail, FileGrade::Word(word)) if word == "fail" => Some(0),
                (RubricScale::OneToFive, FileGrade::Number(n @ 1..=5)) => u8::try_from(*n).ok(),
                _ => None,
            };
            let Some(grade) = grade else {
                let wanted = match scale {
                    RubricScale::PassFail => "\"pass\" or \"fail\"",
                    RubricScale::OneToFive => "a whole number from 1 to 5",
                };
                return Err(error(
                    example.grade.span(),
                    field("grade"),
                    format!("a {} rubric's example grade is {wanted}", scale.name()),
                ));
            };
            let mut fields = Vec::new();
            let values = [
                (RubricField::Question, example.question),
                (RubricField::Answer, example.answer),
                (
                    RubricField::Contexts,
                    example.contexts.map(|c| c.join("\n\n")),
                ),
                (RubricField::Reference, example.reference),
            ];
            for (kind, value) in values {
                let Some(value) = value else { continue };
                if !reads.contains(&kind) {
                    return Err(error(
                        example_span.clone(),
                        field(kind.name()),
                        format!(
                            "the rubric does not read `{}`; hint: add it to `reads` or drop it here",
                            kind.name()
                        ),
                    ));
                }
                fields.push((kind, value));
            }
            examples.push(RubricExample {
                fields,
                grade,
                reason: example.reason,
            });
        }

        out.push(DefinedRubric {
            rubric: Rubric {
                name,
                summary: table.summary,
                criterion_en,
                criterion_zh,
                reads,
                scale,
                examples,
            },
            file: file.to_path_buf(),
            line: header_line,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[judge]
model = "m"

[[metric]]
name = "cites_policy"
criterion = { en = "The answer names the policy number it relies on.", zh = "回答写出了所依据的政策编号。" }
reads = ["answer", "question"]
scale = "pass_fail"

[[metric.examples]]
answer = "Refunds within 30 days (policy 7)."
grade = "pass"
reason = "names policy 7"

[[metric]]
name = "polite"
criterion = "The answer is polite."
reads = ["answer"]
scale = "1-5"
"#;

    fn parse_text(text: &str) -> Result<Vec<DefinedRubric>, RubricError> {
        parse(text, Path::new("rageval.toml"))
    }

    #[test]
    fn good_tables_parse_with_their_lines() {
        let rubrics = parse_text(GOOD).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rubrics.len(), 2);
        let cites = &rubrics[0];
        assert_eq!(cites.line, 5);
        assert_eq!(
            cites.rubric.reads,
            [RubricField::Question, RubricField::Answer]
        );
        assert_eq!(cites.rubric.examples[0].grade, 1);
        assert_eq!(rubrics[1].rubric.scale, RubricScale::OneToFive);
    }

    #[test]
    fn bad_entries_name_file_line_and_field() {
        let cases = [
            (
                GOOD.replace("scale = \"1-5\"", "scale = \"1-10\""),
                "rageval.toml:20: field `metric[2].scale`: unknown scale `1-10`",
            ),
            (
                GOOD.replace("reads = [\"answer\"]", "reads = [\"answr\"]"),
                "rageval.toml:19: field `metric[2].reads`: unknown field `answr`",
            ),
            (
                GOOD.replace("grade = \"pass\"", "grade = 4"),
                "rageval.toml:13: field `metric[1].examples[1].grade`",
            ),
            (
                GOOD.replace("name = \"polite\"", "name = \"po lite\""),
                "rageval.toml:17: field `metric[2].name`",
            ),
            (
                GOOD.replace("criterion = \"The answer is polite.\"\n", ""),
                "rageval.toml:16: field `criterion`: missing field `criterion`",
            ),
            (
                GOOD.replace("scale = \"1-5\"", "scale = \"1-5\"\nweight = 2"),
                "rageval.toml:21: field `weight`: unknown field `weight`",
            ),
        ];
        for (text, expected) in cases {
            let error = parse_text(&text).map(|_| ()).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{error}\nexpected: {expected}");
        }
    }

    #[test]
    fn load_reads_every_file_and_names_one_it_cannot_read() {
        let dir = std::env::temp_dir().join(format!("rageval-rubric-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let (first, second) = (dir.join("a.toml"), dir.join("b.toml"));
        std::fs::write(&first, GOOD).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            &second,
            "[[metric]]\nname = \"brief\"\ncriterion = \"c\"\nreads = [\"answer\"]\nscale = \"1-5\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = load(&[first.clone(), second.clone()])
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|defined| format!("{}@{}", defined.rubric.name, defined.line))
            .collect();
        assert_eq!(names, ["cites_policy@5", "polite@16", "brief@1"]);
        let missing = dir.join("missing.toml");
        let error = load(&[first, missing.clone()]).map(|_| ()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{}: cannot read the rubric file", missing.display())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
