//! Canonical sample fields, the column names each is known by, and `--map` overrides.
//!
//! Datasets come from ragas (two generations of names), the seed articles and home-grown
//! scripts. Rather than one reader per dialect, every record's keys (or a sheet's header) are
//! resolved against one alias table, per record, so a file that mixes dialects still reads as
//! long as each canonical field ends up with exactly one column.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::{DatasetError, DatasetErrorKind};

/// A field of [`crate::Sample`] that a dataset column can fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// `Sample::id`.
    Id,
    /// `Sample::question` (required).
    Question,
    /// `Sample::contexts`: texts or objects with text, id and score.
    Contexts,
    /// Ids of the retrieved contexts, one per context.
    ContextIds,
    /// Retriever scores, one per context.
    ContextScores,
    /// `Sample::answer`.
    Answer,
    /// `Sample::references`: one string or a list.
    Reference,
    /// `Sample::reference_contexts`.
    ReferenceContexts,
    /// `Sample::reference_context_ids`.
    ReferenceContextIds,
    /// `Sample::reference_statements` (seed S4).
    ReferenceStatements,
    /// `Sample::answer_statements` (seed S4).
    AnswerStatements,
    /// `Sample::simulated_questions` (seed S4).
    SimulatedQuestions,
    /// `Sample::history`: earlier messages of the conversation.
    History,
    /// `Sample::conversation_id`.
    ConversationId,
    /// `Sample::turn`.
    Turn,
    /// `Sample::hop`.
    Hop,
    /// `Sample::tool_calls`.
    ToolCalls,
    /// `Sample::reference_tool_calls`.
    ReferenceToolCalls,
    /// `Sample::tool_call_order`.
    ToolCallOrder,
}

impl Field {
    /// Every field, in the order they are resolved and listed in messages.
    pub const ALL: [Field; 19] = [
        Field::Id,
        Field::Question,
        Field::Contexts,
        Field::ContextIds,
        Field::ContextScores,
        Field::Answer,
        Field::Reference,
        Field::ReferenceContexts,
        Field::ReferenceContextIds,
        Field::ReferenceStatements,
        Field::AnswerStatements,
        Field::SimulatedQuestions,
        Field::History,
        Field::ConversationId,
        Field::Turn,
        Field::Hop,
        Field::ToolCalls,
        Field::ReferenceToolCalls,
        Field::ToolCallOrder,
    ];

    /// The canonical name, as used in `--map`.
    pub fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Question => "question",
            Field::Contexts => "contexts",
            Field::ContextIds => "context_ids",
            Field::ContextScores => "context_scores",
            Field::Answer => "answer",
            Field::Reference => "reference",
            Field::ReferenceContexts => "reference_contexts",
            Field::ReferenceContextIds => "reference_context_ids",
            Field::ReferenceStatements => "reference_statements",
            Field::AnswerStatements => "answer_statements",
            Field::SimulatedQuestions => "simulated_questions",
            Field::History => "history",
            Field::ConversationId => "conversation_id",
            Field::Turn => "turn",
            Field::Hop => "hop",
            Field::ToolCalls => "tool_calls",
            Field::ReferenceToolCalls => "reference_tool_calls",
            Field::ToolCallOrder => "tool_call_order",
        }
    }

    /// The column names recognised for this field without a `--map` (exact, case-sensitive).
    ///
    /// Sources: ours and ragas ≥ 0.2 (`user_input`, `retrieved_contexts`, `response`,
    /// `reference`, `*_context_ids`), ragas 0.1 (`question`, `contexts`, `answer`,
    /// `ground_truth`, `ground_truths`), seed S4 (camelCase names), seed S3 (ragas 0.1 names).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Field::Id => &["id", "sample_id", "uuid"],
            Field::Question => &["question", "user_input", "query"],
            Field::Contexts => &["contexts", "retrieved_contexts", "retrievedContext"],
            Field::ContextIds => &["retrieved_context_ids", "context_ids"],
            Field::ContextScores => &["retrieved_context_scores", "context_scores"],
            Field::Answer => &["answer", "response"],
            Field::Reference => &[
                "reference",
                "ground_truth",
                "ground_truths",
                "referenceAnswer",
            ],
            Field::ReferenceContexts => &["reference_contexts"],
            Field::ReferenceContextIds => &["reference_context_ids"],
            Field::ReferenceStatements => &["reference_statements", "referenceAnswerStatements"],
            Field::AnswerStatements => &["answer_statements", "answerStatements"],
            Field::SimulatedQuestions => &["simulated_questions", "simulationQuestions"],
            // `conversation`: the opening turns `rageval testset` writes with a follow-up.
            Field::History => &["history", "conversation"],
            Field::ConversationId => &["conversation_id"],
            Field::Turn => &["turn"],
            Field::Hop => &["hop"],
            Field::ToolCalls => &["tool_calls"],
            Field::ReferenceToolCalls => &["reference_tool_calls", "expected_tool_calls"],
            Field::ToolCallOrder => &["tool_call_order"],
        }
    }

    /// The field with this canonical name.
    pub fn from_name(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|field| field.name() == name)
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// User overrides of the alias table: `field=column` pairs from `--map`.
///
/// `field=` with an empty column switches a field off: no column fills it, and a column that
/// would have matched an alias stays in the metadata. That is how a file whose `uuid` is not
/// unique per sample (it names a source chunk, say) is read with numbered ids: `--map id=`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMap {
    columns: BTreeMap<Field, String>,
}

impl FieldMap {
    /// Parses `field=column` specs; the field must be a canonical name ([`Field::name`]).
    pub fn parse(specs: &[String]) -> Result<FieldMap, DatasetError> {
        let mut map = FieldMap::default();
        for spec in specs {
            let error = |kind| DatasetError::file(Path::new(""), kind);
            let Some((name, column)) = spec.split_once('=') else {
                return Err(error(DatasetErrorKind::InvalidMapSpec {
                    spec: spec.clone(),
                }));
            };
            let name = name.trim();
            let Some(field) = Field::from_name(name) else {
                let valid: Vec<&str> = Field::ALL.iter().map(|f| f.name()).collect();
                return Err(error(DatasetErrorKind::UnknownField {
                    name: name.to_string(),
                    valid: valid.join(", "),
                }));
            };
            if map
                .columns
                .insert(field, column.trim().to_string())
                .is_some()
            {
                return Err(error(DatasetErrorKind::FieldMappedTwice {
                    field: field.name(),
                })
                .with_field(field.name()));
            }
        }
        Ok(map)
    }

    /// The column `--map` assigns to `field`: `None` when not mapped, `Some("")` when
    /// switched off.
    pub fn column(&self, field: Field) -> Option<&str> {
        self.columns.get(&field).map(String::as_str)
    }

    /// True when no field is mapped.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Fails when a mapped column is not among `columns` (a header, or a first record's keys).
    pub(crate) fn check_columns(
        &self,
        mut has_column: impl FnMut(&str) -> bool,
    ) -> Result<(), (Field, DatasetErrorKind)> {
        for (field, column) in &self.columns {
            if !column.is_empty() && !has_column(column) {
                return Err((
                    *field,
                    DatasetErrorKind::MissingColumn {
                        column: column.clone(),
                    },
                ));
            }
        }
        Ok(())
    }

    /// For each field, the column of a record that fills it, given a test for which columns
    /// the record has.
    ///
    /// Mapped fields take their mapped column (when present); the others take the one alias
    /// present that no `--map` has claimed. Two aliases of one field present is an error.
    pub(crate) fn resolve<'k>(
        &self,
        keys: &[&'k str],
    ) -> Result<Resolution<'k>, (Field, DatasetErrorKind)> {
        let mut columns: [Option<&'k str>; Field::ALL.len()] = [None; Field::ALL.len()];
        for field in Field::ALL {
            let found = match self.column(field) {
                Some(mapped) => keys.iter().copied().find(|key| *key == mapped),
                None => {
                    let claimed = |key: &str| self.columns.values().any(|c| c == key);
                    let candidates: Vec<&'k str> = field
                        .aliases()
                        .iter()
                        .filter_map(|alias| keys.iter().copied().find(|key| key == alias))
                        .filter(|key| !claimed(key))
                        .collect();
                    if candidates.len() > 1 {
                        return Err((
                            field,
                            DatasetErrorKind::AmbiguousField {
                                field: field.name(),
                                columns: candidates.iter().map(|c| c.to_string()).collect(),
                            },
                        ));
                    }
                    candidates.first().copied()
                }
            };
            columns[field.index()] = found;
        }
        Ok(Resolution { columns })
    }
}

/// Which column of one record fills each field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resolution<'k> {
    columns: [Option<&'k str>; Field::ALL.len()],
}

impl<'k> Resolution<'k> {
    /// The column filling `field`, if any.
    pub(crate) fn column(&self, field: Field) -> Option<&'k str> {
        self.columns[field.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_alias_belongs_to_one_field() {
        let mut seen = std::collections::HashSet::new();
        for field in Field::ALL {
            assert_eq!(Field::from_name(field.name()), Some(field));
            assert!(field.aliases().contains(&field.name()));
            for alias in field.aliases() {
                assert!(seen.insert(*alias), "alias {alias} used twice");
            }
        }
    }

    #[test]
    fn parse_reads_field_column_pairs() {
        let map = FieldMap::parse(&specs(&["question = q", "id=", "answer=a=b"])).unwrap();
        assert_eq!(map.column(Field::Question), Some("q"));
        assert_eq!(map.column(Field::Id), Some(""));
        assert_eq!(map.column(Field::Answer), Some("a=b"));
        assert_eq!(map.column(Field::Contexts), None);
    }

    #[test]
    fn parse_rejects_unknown_fields_listing_valid_ones() {
        let error = FieldMap::parse(&specs(&["questoin=q"])).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("unknown field `questoin`"), "{message}");
        assert!(message.contains("id, question, contexts"), "{message}");
        let error = FieldMap::parse(&specs(&["question"])).unwrap_err();
        assert!(error.to_string().contains("expected field=column"));
        let error = FieldMap::parse(&specs(&["question=a", "question=b"])).unwrap_err();
        assert!(error.to_string().contains("twice"));
    }

    #[test]
    fn resolve_uses_aliases_and_overrides() {
        let keys = ["user_input", "response", "ground_truth", "extra"];
        let resolved = FieldMap::default().resolve(&keys).unwrap();
        assert_eq!(resolved.column(Field::Question), Some("user_input"));
        assert_eq!(resolved.column(Field::Answer), Some("response"));
        assert_eq!(resolved.column(Field::Reference), Some("ground_truth"));
        assert_eq!(resolved.column(Field::Contexts), None);

        let map = FieldMap::parse(&specs(&["reference=response", "question=extra"])).unwrap();
        let resolved = map.resolve(&keys).unwrap();
        assert_eq!(resolved.column(Field::Reference), Some("response"));
        assert_eq!(resolved.column(Field::Question), Some("extra"));
        // `response` is claimed by the map, so it no longer fills `answer`.
        assert_eq!(resolved.column(Field::Answer), None);
    }

    #[test]
    fn resolve_rejects_two_aliases_of_one_field() {
        let keys = ["question", "user_input"];
        let (field, kind) = FieldMap::default().resolve(&keys).unwrap_err();
        assert_eq!(field, Field::Question);
        assert!(kind.to_string().contains("`question` and `user_input`"));
        // An explicit mapping settles it.
        let map = FieldMap::parse(&specs(&["question=user_input"])).unwrap();
        assert_eq!(
            map.resolve(&keys).unwrap().column(Field::Question),
            Some("user_input")
        );
    }

    #[test]
    fn empty_mapping_switches_a_field_off() {
        let map = FieldMap::parse(&specs(&["id="])).unwrap();
        let resolved = map.resolve(&["uuid", "question"]).unwrap();
        assert_eq!(resolved.column(Field::Id), None);
        assert!(map.check_columns(|_| false).is_ok());
    }
}
