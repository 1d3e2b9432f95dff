//! What `compare --gate` gates on: per gated quantity the least drop that counts
//! (`faithfulness=0.02,answer_relevance=0.03` on the command line, or a small TOML file),
//! the family-wise level, and what to do when the two runs were judged differently.
//!
//! The file:
//!
//! ```toml
//! level = 0.05          # Holm-corrected across the gated quantities (default 0.05)
//! on_mismatch = "warn"  # or "refuse": judged differently, or on other questions
//!
//! [minimal_effect]
//! faithfulness = 0.02
//! answer_relevance = 0.03
//! head_to_head = 0.05   # the candidate's win rate may fall this far below 0.5
//! ```
//!
//! This module parses and checks the settings only; which names are metrics of the runs is
//! checked against the comparison ([`crate::RegressionGate`]).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use rageval_core::position::{field_in_message, line_of};
use serde::Deserialize;
use toml::Spanned;

use crate::ReportError;

/// The name under which a pairwise run's head-to-head result is gated.
pub const HEAD_TO_HEAD: &str = "head_to_head";
/// The family-wise level unless the settings give one.
pub const DEFAULT_GATE_LEVEL: f64 = 0.05;

/// What the gate does when the runs were judged differently or on other questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMismatch {
    /// Say so, and gate anyway.
    Warn,
    /// Refuse to gate (exit 2).
    Refuse,
}

/// One gated quantity and the least drop that fails the gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MinimalEffect {
    /// A metric's name, or [`HEAD_TO_HEAD`].
    pub name: String,
    /// A drop must exceed this (in the metric's units; for the head-to-head result, in win
    /// rate below 0.5) to fail the gate.
    pub effect: f64,
}

/// The gate's settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GateSpec {
    /// In the order given (a file's in name order).
    pub effects: Vec<MinimalEffect>,
    /// The family-wise error level of the Holm correction.
    pub level: f64,
    pub on_mismatch: OnMismatch,
}

impl GateSpec {
    /// The settings `argument` names: a TOML file when it is one, else `name=effect` values
    /// separated by commas.
    pub fn from_argument(argument: &str) -> Result<Self, ReportError> {
        let path = Path::new(argument);
        if path.is_file() {
            let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            return Self::parse_file(&text, path);
        }
        Self::parse_values(argument)
    }

    /// `faithfulness=0.02,answer_relevance=0.03`.
    pub fn parse_values(text: &str) -> Result<Self, ReportError> {
        let invalid = |field: &str, message: String| ReportError::GateSpec {
            source_name: "--gate".into(),
            line: None,
            field: field.into(),
            message,
        };
        let mut effects: Vec<MinimalEffect> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, value)) = item.split_once('=') else {
                return Err(invalid(
                    item,
                    "neither a file nor `metric=minimal effect` (e.g. `faithfulness=0.02`)".into(),
                ));
            };
            let name = name.trim();
            let effect = value
                .trim()
                .parse::<f64>()
                .map_err(|_| invalid(name, format!("`{}` is not a number", value.trim())))?;
            check_effect(effect).map_err(|message| invalid(name, message))?;
            if effects.iter().any(|e| e.name == name) {
                return Err(invalid(name, "given twice".into()));
            }
            effects.push(MinimalEffect {
                name: name.into(),
                effect,
            });
        }
        if effects.is_empty() {
            return Err(invalid(
                "",
                "no metric to gate: give `metric=minimal effect` values or a TOML file".into(),
            ));
        }
        Ok(Self {
            effects,
            level: DEFAULT_GATE_LEVEL,
            on_mismatch: OnMismatch::Warn,
        })
    }

    /// The TOML file `path` holding `text`.
    pub fn parse_file(text: &str, path: &Path) -> Result<Self, ReportError> {
        let invalid =
            |span: Option<Range<usize>>, field: &str, message: String| ReportError::GateSpec {
                source_name: path.display().to_string(),
                line: span.map(|s| line_of(text, s.start)),
                field: field.into(),
                message,
            };
        let file: GateFile = toml::from_str(text).map_err(|error| {
            let message = error.message().to_owned();
            let field = field_in_message(&message).unwrap_or("").to_owned();
            invalid(error.span(), &field, message)
        })?;
        let level = match file.level {
            Some(level) => {
                let value = *level.get_ref();
                if !(value > 0.0 && value < 1.0) {
                    return Err(invalid(
                        Some(level.span()),
                        "level",
                        format!("{value} is not a level between 0 and 1 (e.g. 0.05)"),
                    ));
                }
                value
            }
            None => DEFAULT_GATE_LEVEL,
        };
        let on_mismatch = match file.on_mismatch {
            None => OnMismatch::Warn,
            Some(choice) => match choice.get_ref().as_str() {
                "warn" => OnMismatch::Warn,
                "refuse" => OnMismatch::Refuse,
                other => {
                    return Err(invalid(
                        Some(choice.span()),
                        "on_mismatch",
                        format!("`{other}` is neither \"warn\" nor \"refuse\""),
                    ));
                }
            },
        };
        let mut effects = Vec::new();
        for (name, effect) in file.minimal_effect.get_ref() {
            let value = *effect.get_ref();
            check_effect(value).map_err(|message| {
                invalid(
                    Some(effect.span()),
                    &format!("minimal_effect.{name}"),
                    message,
                )
            })?;
            effects.push(MinimalEffect {
                name: name.clone(),
                effect: value,
            });
        }
        if effects.is_empty() {
            return Err(invalid(
                Some(file.minimal_effect.span()),
                "minimal_effect",
                "no metric to gate: name at least one (`faithfulness = 0.02`)".into(),
            ));
        }
        Ok(Self {
            effects,
            level,
            on_mismatch,
        })
    }

    /// The minimal effect of `name`, when it is gated.
    pub fn effect_of(&self, name: &str) -> Option<f64> {
        self.effects
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.effect)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GateFile {
    level: Option<Spanned<f64>>,
    on_mismatch: Option<Spanned<String>>,
    minimal_effect: Spanned<BTreeMap<String, Spanned<f64>>>,
}

fn check_effect(effect: f64) -> Result<(), String> {
    if effect.is_finite() && effect >= 0.0 {
        Ok(())
    } else {
        Err(format!("{effect} is not a minimal effect (a number ≥ 0)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_give_effects_in_order_at_the_default_level() {
        let spec = GateSpec::parse_values("faithfulness=0.02, answer_relevance=0.03").unwrap();
        assert_eq!(spec.level, DEFAULT_GATE_LEVEL);
        assert_eq!(spec.on_mismatch, OnMismatch::Warn);
        assert_eq!(spec.effect_of("answer_relevance"), Some(0.03));
        assert_eq!(spec.effects[0].name, "faithfulness");
        for (bad, message) in [
            ("faithfulness", "--gate: `faithfulness`: neither a file nor"),
            (
                "faithfulness=x",
                "--gate: `faithfulness`: `x` is not a number",
            ),
            (
                "faithfulness=-1",
                "--gate: `faithfulness`: -1 is not a minimal effect",
            ),
            ("a=0,a=1", "--gate: `a`: given twice"),
            ("", "--gate: no metric to gate"),
        ] {
            let error = GateSpec::parse_values(bad).unwrap_err().to_string();
            assert!(error.starts_with(message), "{bad}: {error}");
        }
    }

    #[test]
    fn a_file_gives_level_mismatch_rule_and_effects() {
        let text = "level = 0.01\non_mismatch = \"refuse\"\n\n[minimal_effect]\n\
                    faithfulness = 0.02\nhead_to_head = 0\n";
        let spec = GateSpec::parse_file(text, Path::new("gate.toml")).unwrap();
        assert_eq!(spec.level, 0.01);
        assert_eq!(spec.on_mismatch, OnMismatch::Refuse);
        assert_eq!(spec.effect_of(HEAD_TO_HEAD), Some(0.0));
        assert_eq!(spec.effect_of("faithfulness"), Some(0.02));
    }

    #[test]
    fn a_bad_file_names_its_line_and_field() {
        let cases = [
            (
                "level = 2\n[minimal_effect]\nf = 0.1\n",
                "gate.toml:1: `level`: 2 is not a level between 0 and 1",
            ),
            (
                "on_mismatch = \"ignore\"\n[minimal_effect]\nf = 0.1\n",
                "gate.toml:1: `on_mismatch`: `ignore` is neither",
            ),
            (
                "[minimal_effect]\nf = 0.1\ng = -0.5\n",
                "gate.toml:3: `minimal_effect.g`: -0.5 is not a minimal effect",
            ),
            (
                "[minimal_effect]\nf = \"high\"\n",
                "gate.toml:2: invalid type",
            ),
            (
                "levels = 0.1\n",
                "gate.toml:1: `levels`: unknown field `levels`",
            ),
            (
                "level = 0.1\n",
                "gate.toml:1: `minimal_effect`: missing field",
            ),
        ];
        for (text, expected) in cases {
            let error = GateSpec::parse_file(text, Path::new("gate.toml"))
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(expected), "{text:?}: {error}");
        }
    }
}
