//! The template registry: every `prompts/<lang>/<name>.txt` file compiled in, parsed once.
//! Each task names its own two files (`PackFiles`, in the task's file); the registry reads
//! them through the table of tasks ([`TaskKind::ALL`]).
//!
//! File format (ours): a header of `key: value` lines — `template` (the task name), `version`
//! (bumped on every edit, so cached answers of the old text are never replayed) and `lang` —
//! then a `=== system` section, a `=== user` section and optional `=== part NAME` sections.
//! A line `[[NAME]]` in the system or user text is replaced by part NAME when the call asks
//! for it and dropped otherwise (a task with optional pieces, e.g. `contexts_check`); parts are
//! our text, assembled before any material goes in. `{{slot}}` marks where the caller's
//! material goes; substitution is one pass, so a slot name inside the material stays text.
//! `data_rule.txt` is the paragraph about fenced data every system message ends with; its
//! `{{tag}}` is the call's fence tag.

use std::sync::OnceLock;

use rageval_judge::{Message, TemplateId};

use super::Lang;
use super::fence::Fence;
use crate::error::TaskError;
use crate::task::TaskKind;

/// The name of the shared paragraph about fenced data.
const DATA_RULE: &str = "data_rule";

/// One template's two files, `prompts/en/NAME.txt` and `prompts/zh/NAME.txt`, compiled in:
/// a task's prompt pack entry (`LlmTask::PACK`, written with [`pack_files!`]), or the data
/// rule's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PackFiles {
    /// The template's name: the task's name, or `data_rule`.
    pub name: &'static str,
    /// (language, path under `prompts/`, text) of each pack.
    pub files: [(Lang, &'static str, &'static str); 2],
}

/// The [`PackFiles`] of the template `NAME`: `pack_files!("abstention")`.
macro_rules! pack_files {
    ($name:literal) => {
        $crate::prompt::pack::PackFiles {
            name: $name,
            files: [
                (
                    $crate::prompt::Lang::En,
                    concat!("en/", $name, ".txt"),
                    include_str!(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/prompts/en/",
                        $name,
                        ".txt"
                    )),
                ),
                (
                    $crate::prompt::Lang::Zh,
                    concat!("zh/", $name, ".txt"),
                    include_str!(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/prompts/zh/",
                        $name,
                        ".txt"
                    )),
                ),
            ],
        }
    };
}
pub(crate) use pack_files;

/// Every template file, the data rule's first, then each task's in [`TaskKind::ALL`] order
/// (the order the manifest lists them in).
fn files() -> impl Iterator<Item = (Lang, &'static str, &'static str)> {
    let data_rule: PackFiles = pack_files!("data_rule");
    std::iter::once(data_rule)
        .chain(TaskKind::ALL.into_iter().map(TaskKind::pack_files))
        .flat_map(|pack| pack.files)
}

/// One parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The task name (or `data_rule`).
    pub name: String,
    /// The pack.
    pub lang: Lang,
    /// `<name>.<lang>` at the file's version: what the cache key and the manifest name.
    pub id: TemplateId,
    /// The system message, with slots.
    pub system: String,
    /// The user message, with slots.
    pub user: String,
    /// Optional parts by name, inserted at their `[[NAME]]` lines when asked for.
    pub parts: Vec<(String, String)>,
    /// Path under `prompts/`.
    pub file: &'static str,
}

fn registry() -> &'static Result<Vec<Template>, (String, String)> {
    static REGISTRY: OnceLock<Result<Vec<Template>, (String, String)>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        files()
            .map(|(lang, file, text)| parse(lang, file, text).map_err(|why| (file.into(), why)))
            .collect()
    })
}

fn registry_ok() -> Result<&'static [Template], TaskError> {
    registry()
        .as_ref()
        .map(Vec::as_slice)
        .map_err(|(file, why)| TaskError::Template {
            file: file.clone(),
            why: why.clone(),
        })
}

/// The ids of every bundled template (both packs, the data rule included), for the run
/// manifest.
pub fn templates() -> Result<Vec<TemplateId>, TaskError> {
    Ok(registry_ok()?.iter().map(|t| t.id.clone()).collect())
}

/// The template of `task` in `lang`.
pub fn template(task: TaskKind, lang: Lang) -> Result<&'static Template, TaskError> {
    find(task.name(), lang)
}

fn find(name: &str, lang: Lang) -> Result<&'static Template, TaskError> {
    registry_ok()?
        .iter()
        .find(|t| t.name == name && t.lang == lang)
        .ok_or_else(|| TaskError::Template {
            file: format!("{}/{name}.txt", lang.code()),
            why: "no such template".into(),
        })
}

fn parse(lang: Lang, file: &'static str, text: &str) -> Result<Template, String> {
    let (header, body) = text
        .split_once("\n=== system\n")
        .ok_or("no `=== system` line")?;
    let mut sections = vec![("system".to_owned(), String::new())];
    for line in body.lines() {
        match line.strip_prefix("=== ") {
            Some("user") => sections.push(("user".to_owned(), String::new())),
            Some(other) => {
                let name = other
                    .strip_prefix("part ")
                    .ok_or_else(|| format!("unknown section `=== {other}`"))?;
                sections.push((format!("part {}", name.trim()), String::new()));
            }
            None => {
                if let Some((_, text)) = sections.last_mut() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    let section = |name: &str| {
        sections
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, text)| text.trim().to_owned())
            .unwrap_or_default()
    };
    let (system, user) = (section("system"), section("user"));
    let parts: Vec<(String, String)> = sections
        .iter()
        .filter_map(|(name, text)| {
            let part = name.strip_prefix("part ")?;
            Some((part.to_owned(), text.trim().to_owned()))
        })
        .collect();
    let mut name = None;
    let mut version = None;
    for line in header.lines().filter(|l| !l.trim().is_empty()) {
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("header line `{line}` is not `key: value`"))?;
        let value = value.trim();
        match key.trim() {
            "template" => name = Some(value.to_owned()),
            "version" => {
                version = Some(
                    value
                        .parse::<u32>()
                        .map_err(|_| format!("version `{value}` is not a whole number"))?,
                );
            }
            "lang" if value == lang.code() => {}
            "lang" => return Err(format!("lang `{value}` in the {} pack", lang.code())),
            other => return Err(format!("unknown header `{other}`")),
        }
    }
    let name = name.ok_or("no `template:` header")?;
    let version = version.ok_or("no `version:` header")?;
    for text in [&system, &user] {
        for wanted in part_lines(text) {
            if !parts.iter().any(|(part, _)| part == wanted) {
                return Err(format!("`[[{wanted}]]` names no `=== part {wanted}`"));
            }
        }
    }
    Ok(Template {
        id: TemplateId::new(format!("{name}.{}", lang.code()), version),
        name,
        lang,
        system,
        user,
        parts,
        file,
    })
}

/// The part names of the `[[NAME]]` lines of `text`.
fn part_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        line.trim()
            .strip_prefix("[[")
            .and_then(|rest| rest.strip_suffix("]]"))
    })
}

/// `text` with each `[[NAME]]` line replaced by the part when `on` names it, else dropped;
/// runs of blank lines left by dropped parts become one.
fn assemble(text: &str, parts: &[(String, String)], on: &[&str]) -> String {
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines() {
        let wanted = line
            .trim()
            .strip_prefix("[[")
            .and_then(|rest| rest.strip_suffix("]]"));
        match wanted {
            None => lines.push(line),
            Some(name) if on.contains(&name) => {
                if let Some((_, part)) = parts.iter().find(|(part, _)| part == name) {
                    lines.extend(part.lines());
                }
            }
            Some(_) => {}
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut blank_run = false;
    for line in lines {
        let blank = line.trim().is_empty();
        if blank && blank_run {
            continue;
        }
        blank_run = blank;
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

/// A template rendered for one call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rendered {
    pub template: TemplateId,
    pub messages: Vec<Message>,
}

/// Renders `task`'s template in `lang`: the parts named in `parts` put in, slots filled in
/// one pass, the data rule (with the fence tag) appended to the system message. Every
/// `{{slot}}` left must have a value.
pub(crate) fn render(
    task: TaskKind,
    lang: Lang,
    fence: &Fence,
    slots: &[(&str, String)],
    parts: &[&str],
) -> Result<Rendered, TaskError> {
    let template = template(task, lang)?;
    let rule = find(DATA_RULE, lang)?;
    let fail = |why: String| TaskError::Template {
        file: template.file.to_owned(),
        why,
    };
    let tag = [("tag", fence.tag().to_owned())];
    let system = format!(
        "{}\n\n{}",
        fill(&assemble(&template.system, &template.parts, parts), slots).map_err(fail)?,
        fill(&rule.system, &tag).map_err(|why| TaskError::Template {
            file: rule.file.to_owned(),
            why,
        })?
    );
    let user = fill(&assemble(&template.user, &template.parts, parts), slots).map_err(fail)?;
    Ok(Rendered {
        template: template.id.clone(),
        messages: vec![Message::system(system), Message::user(user)],
    })
}

/// One-pass `{{slot}}` substitution; values are never rescanned.
fn fill(text: &str, slots: &[(&str, String)]) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| format!("unclosed slot near `{}`", &rest[open..]))?;
        let name = &after[..close];
        let value = slots
            .iter()
            .find(|(slot, _)| *slot == name)
            .map(|(_, value)| value)
            .ok_or_else(|| format!("no value for slot `{{{{{name}}}}}`"))?;
        out.push_str(value);
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The slot names a template uses, for tests.
#[cfg(test)]
pub(crate) fn slot_names(template: &Template) -> Vec<String> {
    let mut names = Vec::new();
    let parts = template.parts.iter().map(|(_, text)| text);
    for text in [&template.system, &template.user].into_iter().chain(parts) {
        let mut rest = text.as_str();
        while let Some(open) = rest.find("{{") {
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else { break };
            names.push(after[..close].to_owned());
            rest = &after[close + 2..];
        }
    }
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_parses_with_its_language_and_a_version() {
        let all = registry_ok().unwrap_or_default();
        assert_eq!(all.len(), files().count());
        for template in all {
            assert!(template.id.version >= 1, "{}", template.file);
            assert!(!template.system.is_empty(), "{}", template.file);
            let stem = template.file.trim_end_matches(".txt");
            assert_eq!(stem, format!("{}/{}", template.lang.code(), template.name));
        }
        for task in TaskKind::ALL {
            for lang in Lang::ALL {
                let t = template(task, lang).unwrap_or_else(|e| panic!("{e}"));
                assert!(!t.user.is_empty(), "{}", t.file);
            }
        }
        let rule = find(DATA_RULE, Lang::Zh).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(slot_names(rule), ["tag"]);
    }

    #[test]
    fn both_packs_of_a_task_use_the_same_slots() {
        for task in TaskKind::ALL {
            let en = template(task, Lang::En).map(slot_names).unwrap_or_default();
            let zh = template(task, Lang::Zh).map(slot_names).unwrap_or_default();
            assert_eq!(en, zh, "{task}");
        }
    }

    #[test]
    fn substitution_is_one_pass_and_complete() {
        let slots = [("a", "{{b}}".to_owned()), ("b", "B".to_owned())];
        assert_eq!(fill("x {{a}} {{b}}", &slots).as_deref(), Ok("x {{b}} B"));
        assert!(fill("{{missing}}", &slots).is_err());
        assert!(fill("{{open", &slots).is_err());
    }

    #[test]
    fn parts_go_in_where_asked_and_leave_no_gap_otherwise() {
        let template = parse(
            Lang::En,
            "en/x.txt",
            "template: x\nversion: 1\nlang: en\n=== system\nS\n=== user\nA\n\n[[b]]\n\n[[c]]\n\nD {{d}}\n=== part b\nB {{b}}\n=== part c\nC",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let parts = &template.parts;
        assert_eq!(
            assemble(&template.user, parts, &["b", "c"]),
            "A\n\nB {{b}}\n\nC\n\nD {{d}}"
        );
        assert_eq!(assemble(&template.user, parts, &["c"]), "A\n\nC\n\nD {{d}}");
        assert_eq!(assemble(&template.user, parts, &[]), "A\n\nD {{d}}");
        assert_eq!(slot_names(&template), ["b", "d"]);
        let unknown = parse(
            Lang::En,
            "en/x.txt",
            "template: x\nversion: 1\n=== system\nS\n[[nope]]\n=== user\nU",
        );
        assert!(unknown.is_err_and(|e| e.contains("`[[nope]]`")));
    }

    #[test]
    fn a_malformed_header_is_named() {
        let bad = parse(
            Lang::En,
            "en/x.txt",
            "template: x\nversion: one\n=== system\nS",
        );
        assert!(bad.is_err_and(|e| e.contains("version `one`")));
        let wrong_lang = parse(
            Lang::En,
            "en/x.txt",
            "template: x\nversion: 1\nlang: zh\n=== system\nS",
        );
        assert!(wrong_lang.is_err_and(|e| e.contains("lang `zh`")));
    }
}
