//! Prompt packs: our own `en` and `zh` templates, one versioned file per task under
//! `prompts/<lang>/`, compiled into the binary; the language is picked per call from the
//! script of the task's question (or its text) unless forced.
//!
//! - [`pack`]: the template registry and the file format (a `template:` / `version:` /
//!   `lang:` header, then `=== system` and `=== user` sections with `{{slot}}`s).
//! - [`fence`]: untrusted text (questions, answers, contexts, statements) is wrapped in
//!   fences whose tag appears nowhere in that text, and every system prompt says that fenced
//!   material is data, never instructions.
//!
//! The template id and version enter the judge's cache key ([`TemplateId`]) and the run
//! manifest ([`templates`]). Nothing here calls a model.

pub mod fence;
pub mod pack;

use std::fmt;

use rageval_core::text::{Language, detect_language};
use serde::{Deserialize, Serialize};

pub use fence::Fence;
pub use pack::{Template, templates};

#[cfg(doc)]
use rageval_judge::TemplateId;

/// The language of a prompt pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Lang {
    /// English.
    #[serde(rename = "en")]
    En,
    /// Chinese.
    #[serde(rename = "zh")]
    Zh,
}

impl Lang {
    /// Both packs.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The pack for `text`: Chinese when its script is Chinese
    /// ([`detect_language`]), English for everything else.
    pub fn detect(text: &str) -> Lang {
        match detect_language(text) {
            Language::Chinese => Lang::Zh,
            Language::English | Language::Other => Lang::En,
        }
    }

    /// `en` or `zh`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// Parses `en` or `zh`.
    pub fn from_code(code: &str) -> Option<Lang> {
        match code {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// How the pack is chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LangChoice {
    /// Per call, from the script of the task's question (or of its text when it has none).
    #[default]
    Auto,
    /// Always this pack (`--lang`).
    Force(Lang),
}

impl std::str::FromStr for LangChoice {
    type Err = String;

    /// `auto`, `en` or `zh`: the one parser of `--lang` and of Python's `Judge(lang=...)`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(LangChoice::Auto),
            "en" => Ok(LangChoice::Force(Lang::En)),
            "zh" => Ok(LangChoice::Force(Lang::Zh)),
            _ => Err("expected auto, en or zh".into()),
        }
    }
}

impl LangChoice {
    /// The pack for a call whose deciding text is `text`.
    pub fn pick(self, text: &str) -> Lang {
        match self {
            LangChoice::Auto => Lang::detect(text),
            LangChoice::Force(lang) => lang,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_parses_from_its_name() {
        assert_eq!("auto".parse(), Ok(LangChoice::Auto));
        assert_eq!("zh".parse(), Ok(LangChoice::Force(Lang::Zh)));
        assert_eq!("en".parse(), Ok(LangChoice::Force(Lang::En)));
        assert!("fr".parse::<LangChoice>().is_err());
    }

    #[test]
    fn the_pack_follows_the_script_unless_forced() {
        assert_eq!(
            LangChoice::Auto.pick("少儿编程的市场规模有多大？"),
            Lang::Zh
        );
        assert_eq!(LangChoice::Auto.pick("How large is the market?"), Lang::En);
        assert_eq!(LangChoice::Auto.pick("使用Python进行数据分析"), Lang::Zh);
        assert_eq!(LangChoice::Auto.pick("12345"), Lang::En);
        assert_eq!(LangChoice::Force(Lang::Zh).pick("In English"), Lang::Zh);
        assert_eq!(Lang::from_code("zh"), Some(Lang::Zh));
        assert_eq!(Lang::from_code("fr"), None);
    }
}
