//! The pure parts of a generated test set (`rageval testset`): the chunks it is drawn from,
//! the question categories, the seeded sampling plan ([`plan`]), near-duplicate detection
//! ([`minhash`]) and the lexical gates ([`lexical`]).
//!
//! Nothing here asks a model or reads a file: the chunks come from `rageval-sources`, the
//! questions from the judge through `rageval-tasks`, and the run from `rageval-run`.

pub mod lexical;
pub mod minhash;
pub mod plan;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One chunk of the team's documents a question may be written from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceChunk {
    /// The chunk's id in its source (the gold id of `id_context_recall`).
    pub id: String,
    /// The document it belongs to (a path, or the chunk file's name).
    pub document: String,
    /// Where in the document, in words (`lines 3-9`, `line 12`).
    pub location: String,
    /// Its text.
    pub text: String,
}

/// What kind of question an item asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A fact stated in one passage.
    Fact,
    /// A number, date or quantity stated in one passage.
    Numeric,
    /// A question that needs two passages together.
    MultiHop,
    /// A comparison of two things, each described in its own passage.
    Comparison,
    /// A question on the passage's topic that the documents do not answer.
    Unanswerable,
    /// A follow-up question in a two-turn conversation.
    FollowUp,
}

impl Category {
    /// Every category, in the order plans and summaries list them.
    pub const ALL: [Category; 6] = [
        Category::Fact,
        Category::Numeric,
        Category::MultiHop,
        Category::Comparison,
        Category::Unanswerable,
        Category::FollowUp,
    ];

    /// The snake_case name, as flags, files and summaries write it.
    pub fn name(self) -> &'static str {
        match self {
            Category::Fact => "fact",
            Category::Numeric => "numeric",
            Category::MultiHop => "multi_hop",
            Category::Comparison => "comparison",
            Category::Unanswerable => "unanswerable",
            Category::FollowUp => "follow_up",
        }
    }

    /// Whether the item's question is written from two passages.
    pub fn needs_two_chunks(self) -> bool {
        matches!(self, Category::MultiHop | Category::Comparison)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Category {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().replace('-', "_");
        Category::ALL
            .into_iter()
            .find(|c| c.name() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = Category::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "unknown question category `{text}` (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_parse_by_name_and_with_hyphens() {
        for category in Category::ALL {
            assert_eq!(category.name().parse::<Category>(), Ok(category));
        }
        assert_eq!("multi-hop".parse::<Category>(), Ok(Category::MultiHop));
        assert!("trivia".parse::<Category>().is_err());
    }
}
