//! The files seed S3 writes per question, `GT_{question}.json` and `FULL_{question}.json`:
//! their JSON shapes, and file names that are safe on every common file system.
//!
//! A question becomes a file name by these steps, in order:
//! 1. characters Windows forbids (`< > : " / \ | ? *`) and control characters become `_`;
//! 2. surrounding white space and trailing dots are removed (Windows drops trailing dots and
//!    spaces, so `a.` and `a` would be one file); an empty result becomes `untitled`;
//! 3. a name whose part before the first dot is a Windows device name (`CON`, `PRN`, `AUX`,
//!    `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`, with superscript digits, `CONIN$`, `CONOUT$`; any
//!    case) gets a leading `_`; with the `GT_`/`FULL_` prefixes this cannot happen, but the
//!    function is general;
//! 4. a name over [`MAX_FILE_NAME_BYTES`] bytes of UTF-8 keeps the longest prefix that fits
//!    with `~` and a 16-hex-digit FNV-1a hash of the whole question, so long questions that
//!    share a beginning stay apart.
//!
//! Among the questions of one run, names equal ignoring case (Windows and macOS compare
//! names so) but from different questions all get the `~hash` suffix; a question repeated
//! verbatim gets `~2`, `~3`, … in order of appearance. The result does not depend on the
//! order of distinct questions. Unicode normalisation (macOS stores NFD) is not applied.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

/// Longest file name produced before a collision suffix, in UTF-8 bytes; common file systems
/// allow 255, which leaves room for the suffixes.
pub const MAX_FILE_NAME_BYTES: usize = 200;
/// File name prefix of the question, contexts and reference answer file.
pub const GROUND_TRUTH_PREFIX: &str = "GT_";
/// File name prefix of the file that adds the system's answer.
pub const FULL_PREFIX: &str = "FULL_";
/// Extension of both files.
pub const EXTENSION: &str = ".json";

/// `GT_{question}.json`: seed S3's shape, usable for ragas-style scoring.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroundTruthFile {
    /// The question.
    pub question: String,
    /// The contexts the reference was generated from.
    pub contexts: Vec<String>,
    /// The reference answer.
    pub ground_truth: String,
}

/// `FULL_{question}.json`: the same plus the answer of the system under test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FullFile {
    /// The question.
    pub question: String,
    /// The contexts the reference was generated from.
    pub contexts: Vec<String>,
    /// The reference answer.
    pub ground_truth: String,
    /// The system's answer.
    pub answer: String,
}

const FORBIDDEN: &[char] = &['<', '>', ':', '"', '/', '\\', '|', '?', '*'];
const DEVICE_NAMES: &[&str] = &["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"];

/// FNV-1a, 64 bits: stable across platforms and versions, unlike `std`'s hasher.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn hash_suffix(question: &str) -> String {
    format!("~{:016x}", fnv1a(question))
}

fn is_device_name(name: &str) -> bool {
    let base = name
        .split('.')
        .next()
        .unwrap_or(name)
        .trim_end_matches(' ')
        .to_ascii_uppercase();
    if DEVICE_NAMES.contains(&base.as_str()) {
        return true;
    }
    let (Some(stem), Some(last)) = (base.get(..3), base.get(3..)) else {
        return false;
    };
    (stem == "COM" || stem == "LPT")
        && last.chars().count() == 1
        && last
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '¹' | '²' | '³'))
}

fn clean(question: &str) -> String {
    let replaced: String = question
        .chars()
        .map(|c| {
            if c.is_control() || FORBIDDEN.contains(&c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    let trimmed = replaced.trim().trim_end_matches(['.', ' ']).trim();
    if trimmed.is_empty() {
        "untitled".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// The longest prefix of `text` of at most `bytes` bytes, cut at a character boundary.
fn prefix_within(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `prefix` + the cleaned question + `extension`, safe on every common file system (see the
/// module doc). Collisions between questions are [`file_names`]'s job.
pub fn file_name(prefix: &str, question: &str, extension: &str) -> String {
    let mut stem = clean(question);
    if prefix.len() + stem.len() + extension.len() > MAX_FILE_NAME_BYTES {
        let suffix = hash_suffix(question);
        let room =
            MAX_FILE_NAME_BYTES.saturating_sub(prefix.len() + extension.len() + suffix.len());
        let cut = prefix_within(&stem, room).trim_end_matches(['.', ' ']);
        stem = format!("{cut}{suffix}");
    }
    let name = format!("{prefix}{stem}{extension}");
    if is_device_name(&name) {
        format!("_{name}")
    } else {
        name
    }
}

/// Safe, distinct file names for `questions` (see the module doc), in the same order.
pub fn file_names(prefix: &str, questions: &[&str], extension: &str) -> Vec<String> {
    let mut names: Vec<String> = questions
        .iter()
        .map(|q| file_name(prefix, q, extension))
        .collect();
    let mut owners: HashMap<String, HashSet<&str>> = HashMap::new();
    for (name, question) in names.iter().zip(questions) {
        owners
            .entry(name.to_lowercase())
            .or_default()
            .insert(question);
    }
    for (name, question) in names.iter_mut().zip(questions) {
        if owners
            .get(&name.to_lowercase())
            .is_some_and(|set| set.len() > 1)
        {
            *name = with_suffix(name, extension, &hash_suffix(question));
        }
    }
    let mut taken: HashSet<String> = HashSet::new();
    for name in &mut names {
        let mut candidate = name.clone();
        let mut copy = 1;
        while !taken.insert(candidate.to_lowercase()) {
            copy += 1;
            candidate = with_suffix(name, extension, &format!("~{copy}"));
        }
        *name = candidate;
    }
    names
}

/// `name` with `suffix` inserted before `extension` (or appended when it lacks it).
fn with_suffix(name: &str, extension: &str, suffix: &str) -> String {
    match name.strip_suffix(extension) {
        Some(stem) if !extension.is_empty() => format!("{stem}{suffix}{extension}"),
        _ => format!("{name}{suffix}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_and_control_characters_become_underscores() {
        assert_eq!(
            file_name("GT_", "a/b\\c:d*e?f\"g<h>i|j\tk\nl\u{7f}m", ".json"),
            "GT_a_b_c_d_e_f_g_h_i_j_k_l_m.json"
        );
        assert_eq!(
            file_name("GT_", "主营业务是什么？", ".json"),
            "GT_主营业务是什么？.json"
        );
    }

    #[test]
    fn trailing_dots_and_spaces_go_and_empty_becomes_untitled() {
        assert_eq!(
            file_name("GT_", "  what is it. . ", ".json"),
            "GT_what is it.json"
        );
        assert_eq!(file_name("GT_", "...", ".json"), "GT_untitled.json");
        assert_eq!(file_name("", "", ""), "untitled");
    }

    #[test]
    fn device_names_are_escaped_in_any_case() {
        for question in [
            "CON", "con", "Nul.txt", "com1", "LPT9", "COM¹", "conin$", "aux ",
        ] {
            let name = file_name("", question, "");
            assert!(name.starts_with('_'), "{question} -> {name}");
        }
        for question in ["CONSOLE", "COM10", "LPT", "nul_", "icon"] {
            assert!(!file_name("", question, "").starts_with('_'), "{question}");
        }
        assert_eq!(file_name("GT_", "CON", ".json"), "GT_CON.json");
    }

    #[test]
    fn long_questions_are_cut_at_a_character_and_keep_a_hash() {
        let long = "问".repeat(300);
        let name = file_name("GT_", &long, ".json");
        assert!(name.len() <= MAX_FILE_NAME_BYTES, "{}", name.len());
        assert!(name.ends_with(&format!("{}.json", hash_suffix(&long))));
        let other = format!("{}答", "问".repeat(299));
        assert_ne!(name, file_name("GT_", &other, ".json"));
    }

    #[test]
    fn collisions_get_hashes_and_repeats_get_counters() {
        let questions = ["a?", "a*", "A?", "b", "b", "b"];
        let names = file_names("GT_", &questions, ".json");
        let lower: HashSet<String> = names.iter().map(|n| n.to_lowercase()).collect();
        assert_eq!(lower.len(), names.len(), "{names:?}");
        assert_eq!(names[0], format!("GT_a_{}.json", hash_suffix("a?")));
        assert_eq!(&names[3..], ["GT_b.json", "GT_b~2.json", "GT_b~3.json"]);
        // Distinct questions keep their names whatever the order.
        let reversed: Vec<&str> = questions[..3].iter().rev().copied().collect();
        let names_reversed = file_names("GT_", &reversed, ".json");
        assert_eq!(
            names_reversed,
            [names[2].clone(), names[1].clone(), names[0].clone()]
        );
    }

    #[test]
    fn fnv1a_matches_its_reference_values() {
        // Reference vectors from the FNV specification (draft-eastlake-fnv, test suite).
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_files_have_the_seed_fields() {
        let full = FullFile {
            question: "q".into(),
            contexts: vec!["c".into()],
            ground_truth: "g".into(),
            answer: "a".into(),
        };
        let json = serde_json::to_value(&full).unwrap_or_default();
        let mut keys: Vec<&str> = json
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        assert_eq!(keys, ["answer", "contexts", "ground_truth", "question"]);
    }
}
