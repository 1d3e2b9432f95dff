//! Turning one record — a JSON object, or a table row keyed by its header — into a [`Sample`].
//!
//! Every format reader hands its records to one [`RecordBuilder`], so aliases, type checks,
//! ids and duplicate detection behave the same whatever the file type. Table cells arrive as
//! strings; for list-valued fields a cell may hold a JSON array or the Python list repr ragas
//! writes when a DataFrame goes to CSV (`['a', 'b']`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

use super::error::{DatasetError, DatasetErrorKind};
use super::field::{Field, FieldMap};
use super::turns;
use crate::conversation::Role;
use crate::sample::{Context, Sample};

/// One record as a format reader found it: its fields and where it starts.
#[derive(Debug)]
pub(crate) struct Record {
    /// The file it came from, when not the dataset path itself (seed S3 directories).
    pub(crate) file: Option<PathBuf>,
    /// 1-based line or sheet row where the record starts.
    pub(crate) line: usize,
    /// Keys (or header cells) and values.
    pub(crate) fields: Map<String, Value>,
}

/// An id as the duplicate check remembers it: the first 96 bits of its SHA-256. Each pass
/// over a dataset (a run, then each report) remembers every id; 12 bytes each instead of the
/// id's text keeps that flat in the id's length (issue 39: the 100,000-sample run's reports).
/// Two different ids share a key with a chance near 2⁻⁹⁶ per pair: among ten million ids,
/// about one in 10¹⁵ runs would refuse a dataset for a duplicate it does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct IdKey([u32; 3]);

impl IdKey {
    fn of(id: &str) -> Self {
        let digest = Sha256::digest(id.as_bytes());
        let word = |at: usize| {
            u32::from_le_bytes([digest[at], digest[at + 1], digest[at + 2], digest[at + 3]])
        };
        IdKey([word(0), word(4), word(8)])
    }

    /// Where the key sits in a hash table: its own first 64 bits, already uniform.
    fn hash(self) -> u64 {
        u64::from(self.0[0]) | (u64::from(self.0[1]) << 32)
    }
}

/// Each id seen so far, by [`IdKey`], and the 1-based line that used it: 16 bytes an id in
/// the table (a map from a 16-byte key to a line took 32, and twice that while it grew).
#[derive(Debug, Default)]
struct SeenIds {
    table: hashbrown::HashTable<SeenId>,
    /// Lines past `u32::MAX`, which the table's entries cannot hold (they hold `u32::MAX`).
    far_lines: HashMap<IdKey, usize>,
}

#[derive(Debug, Clone, Copy)]
struct SeenId {
    key: IdKey,
    line: u32,
}

impl SeenIds {
    /// The line that used `key` first, if one did.
    fn first_line(&self, key: IdKey) -> Option<usize> {
        let seen = self.table.find(key.hash(), |seen| seen.key == key)?;
        match seen.line {
            u32::MAX => self.far_lines.get(&key).copied(),
            line => usize::try_from(line).ok(),
        }
    }

    /// Remembers that `line` used `key`, unless a line did before.
    fn insert(&mut self, key: IdKey, line: usize) {
        if self.first_line(key).is_some() {
            return;
        }
        let narrow = u32::try_from(line).ok().filter(|&l| l != u32::MAX);
        if narrow.is_none() {
            self.far_lines.insert(key, line);
        }
        let line = narrow.unwrap_or(u32::MAX);
        self.table
            .insert_unique(key.hash(), SeenId { key, line }, |seen| seen.key.hash());
    }
}

/// Builds samples from records, remembering ids (only ids, so JSONL stays streamed).
#[derive(Debug)]
pub(crate) struct RecordBuilder {
    file: PathBuf,
    map: FieldMap,
    /// Cells are strings: empty means absent, and list fields may hold list literals.
    tabular: bool,
    /// Each id seen so far and the line that used it.
    ids: SeenIds,
    records: usize,
    map_checked: bool,
}

impl RecordBuilder {
    /// A builder for one file.
    pub(crate) fn new(file: &Path, map: FieldMap, tabular: bool) -> Self {
        Self {
            file: file.to_path_buf(),
            map,
            tabular,
            ids: SeenIds::default(),
            records: 0,
            map_checked: false,
        }
    }

    /// The file records come from.
    pub(crate) fn file(&self) -> &Path {
        &self.file
    }

    /// Checks a table header once, so a bad `--map` or two aliases of one field are reported
    /// at the header line rather than at every row.
    pub(crate) fn check_header(
        &mut self,
        header: &[String],
        line: usize,
    ) -> Result<(), DatasetError> {
        self.map_checked = true;
        let error =
            |kind, field: Field| DatasetError::at(&self.file, line, kind).with_field(field.name());
        self.map
            .check_columns(|column| header.iter().any(|h| h == column))
            .map_err(|(field, kind)| error(kind, field))?;
        let keys: Vec<&str> = header.iter().map(String::as_str).collect();
        self.map
            .resolve(&keys)
            .map_err(|(field, kind)| error(kind, field))?;
        Ok(())
    }

    /// Converts one record, naming its own file in errors when it has one.
    pub(crate) fn build_record(&mut self, record: Record) -> Result<Sample, DatasetError> {
        let result = self.build(record.line, record.fields);
        match record.file {
            Some(file) => result.map_err(|mut error| {
                error.file = file;
                error
            }),
            None => result,
        }
    }

    /// Converts one record starting at `line` into a sample.
    pub(crate) fn build(
        &mut self,
        line: usize,
        mut record: Map<String, Value>,
    ) -> Result<Sample, DatasetError> {
        self.records += 1;
        let number = self.records;
        let file = self.file.clone();
        let error = move |kind, field: &str| DatasetError::at(&file, line, kind).with_field(field);

        if !self.map_checked {
            // A mapped column must appear in the first record; later records may omit it
            // like any optional field.
            self.map_checked = true;
            self.map
                .check_columns(|column| record.contains_key(column))
                .map_err(|(field, kind)| error(kind, field.name()))?;
        }
        let keys: Vec<String> = record.keys().cloned().collect();
        let key_refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let resolution = self
            .map
            .resolve(&key_refs)
            .map_err(|(field, kind)| error(kind, field.name()))?;

        let tabular = self.tabular;
        let mut take = |field: Field| -> Option<(String, Value)> {
            let column = resolution.column(field)?;
            let value = record.remove(column)?;
            let absent = match &value {
                Value::Null => true,
                Value::String(s) => tabular && s.trim().is_empty(),
                _ => false,
            };
            (!absent).then(|| (column.to_string(), value))
        };
        let mut sample = Sample::default();

        if resolution.column(Field::Question).is_none() {
            return Err(error(
                DatasetErrorKind::NoQuestionColumn { columns: keys },
                Field::Question.name(),
            ));
        }
        let question = take(Field::Question);
        let question_column = question
            .as_ref()
            .map_or(Field::Question.name().to_string(), |(c, _)| c.clone());
        sample.question = match question {
            Some((column, value)) => text(value).map_err(|kind| error(kind, &column))?,
            None => String::new(),
        };
        if sample.question.trim().is_empty() {
            return Err(error(DatasetErrorKind::MissingField, &question_column));
        }

        let id = match take(Field::Id) {
            Some((column, value)) => Some((
                column.clone(),
                id_text(value).map_err(|kind| error(kind, &column))?,
            )),
            None => None,
        };

        if let Some((column, value)) = take(Field::Contexts) {
            sample.contexts = contexts(value, tabular).map_err(|kind| error(kind, &column))?;
        }
        if let Some((column, value)) = take(Field::ContextIds) {
            let ids = id_list(value, tabular).map_err(|kind| error(kind, &column))?;
            if sample.contexts.is_empty() {
                // ID-only data (ragas's ID-based metrics): contexts known by id alone.
                sample.contexts = ids
                    .into_iter()
                    .map(|id| Context {
                        id: Some(id),
                        text: String::new(),
                        score: None,
                        hop: None,
                    })
                    .collect();
            } else if ids.len() != sample.contexts.len() {
                let kind = DatasetErrorKind::LengthMismatch {
                    expected: sample.contexts.len(),
                    found: ids.len(),
                };
                return Err(error(kind, &column));
            } else {
                for (context, id) in sample.contexts.iter_mut().zip(ids) {
                    context.id = Some(id);
                }
            }
        }
        if let Some((column, value)) = take(Field::ContextScores) {
            let scores = numbers(value, tabular).map_err(|kind| error(kind, &column))?;
            if scores.len() != sample.contexts.len() {
                let kind = DatasetErrorKind::LengthMismatch {
                    expected: sample.contexts.len(),
                    found: scores.len(),
                };
                return Err(error(kind, &column));
            }
            for (context, score) in sample.contexts.iter_mut().zip(scores) {
                context.score = Some(score);
            }
        }
        if let Some((column, value)) = take(Field::Answer) {
            sample.answer = Some(text(value).map_err(|kind| error(kind, &column))?);
        }
        let mut list = |field: Field, ids: bool| -> Result<Option<Vec<String>>, DatasetError> {
            match take(field) {
                Some((column, value)) => {
                    let items = if ids {
                        id_list(value, tabular)
                    } else {
                        text_list(value, tabular)
                    };
                    items.map(Some).map_err(|kind| error(kind, &column))
                }
                None => Ok(None),
            }
        };
        sample.references = list(Field::Reference, false)?.unwrap_or_default();
        sample.reference_contexts = list(Field::ReferenceContexts, false)?.unwrap_or_default();
        sample.reference_context_ids = list(Field::ReferenceContextIds, true)?.unwrap_or_default();
        sample.reference_statements = list(Field::ReferenceStatements, false)?;
        sample.answer_statements = list(Field::AnswerStatements, false)?;
        sample.simulated_questions = list(Field::SimulatedQuestions, false)?;
        let mut conversation = Conversation::default();
        let mut read = |field: Field| {
            take(field).map(|(column, value)| {
                conversation.columns.push((field, column));
                value
            })
        };
        let history = read(Field::History);
        let conversation_id = read(Field::ConversationId);
        let turn = read(Field::Turn);
        let hop = read(Field::Hop);
        let tool_calls = read(Field::ToolCalls);
        let reference_tool_calls = read(Field::ReferenceToolCalls);
        let order = read(Field::ToolCallOrder);
        let named = |field: Field, kind| error(kind, conversation.column(field));
        if let Some(value) = history {
            sample.history =
                turns::history(value, tabular).map_err(|k| named(Field::History, k))?;
        }
        if let Some(value) = conversation_id {
            sample.conversation_id =
                Some(id_text(value).map_err(|k| named(Field::ConversationId, k))?);
        }
        if let Some(value) = turn {
            sample.turn = Some(turns::turn(value).map_err(|k| named(Field::Turn, k))?);
        }
        if let Some(value) = hop {
            sample.hop = Some(turns::hop(value, tabular).map_err(|k| named(Field::Hop, k))?);
        }
        if let Some(value) = tool_calls {
            sample.tool_calls =
                turns::tool_calls(value, tabular).map_err(|k| named(Field::ToolCalls, k))?;
        }
        if let Some(value) = reference_tool_calls {
            sample.reference_tool_calls = turns::tool_calls(value, tabular)
                .map_err(|k| named(Field::ReferenceToolCalls, k))?;
        }
        if let Some(value) = order {
            sample.tool_call_order =
                turns::order(value).map_err(|k| named(Field::ToolCallOrder, k))?;
        }
        if sample.turn.is_none() && !sample.history.is_empty() {
            // The turn after the history's last.
            let opened = sample
                .history
                .iter()
                .filter(|t| t.role == Role::User)
                .count();
            sample.turn = Some(opened + 1);
        }

        sample.id = match id {
            Some((column, id)) => {
                if let Some(first_line) = self.ids.first_line(IdKey::of(&id)) {
                    let kind = DatasetErrorKind::DuplicateId { id, first_line };
                    return Err(error(kind, &column));
                }
                id
            }
            None => number.to_string(),
        };
        // Numbered ids can collide with data ids in a file that has ids on some rows only.
        let key = IdKey::of(&sample.id);
        if let Some(first_line) = self.ids.first_line(key) {
            let kind = DatasetErrorKind::DuplicateId {
                id: sample.id,
                first_line,
            };
            return Err(error(kind, Field::Id.name()));
        }
        self.ids.insert(key, line);
        sample.metadata = record;
        Ok(sample)
    }
}

/// The columns the conversation fields of one record came from, to name in errors.
#[derive(Default)]
struct Conversation {
    columns: Vec<(Field, String)>,
}

impl Conversation {
    fn column(&self, field: Field) -> &str {
        self.columns
            .iter()
            .find(|(f, _)| *f == field)
            .map_or(field.name(), |(_, column)| column.as_str())
    }
}

/// A short description of a JSON value for "expected …, found …".
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(s) if s.trim().is_empty() => "an empty string".to_string(),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// The name of a JSON value's type, for whole-record errors.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong(expected: &'static str, value: &Value) -> DatasetErrorKind {
    DatasetErrorKind::WrongType {
        expected,
        found: describe(value),
    }
}

fn wrong_item(expected: &'static str, value: &Value, position: usize) -> DatasetErrorKind {
    DatasetErrorKind::WrongType {
        expected,
        found: format!("{} at position {}", describe(value), position + 1),
    }
}

/// A text field: strings only (a number answer is more likely a mapping mistake).
fn text(value: Value) -> Result<String, DatasetErrorKind> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(wrong("a string", &other)),
    }
}

/// An id: a string, or a number written as it appears.
fn id_text(value: Value) -> Result<String, DatasetErrorKind> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(wrong("a non-empty string or a number", &other)),
    }
}

/// The elements of a list field: a JSON array, a list literal in a table cell, or `None`
/// when the value is a single scalar.
fn elements(
    value: Value,
    tabular: bool,
    expected: &'static str,
) -> Result<Result<Vec<Value>, Value>, DatasetErrorKind> {
    match value {
        Value::Array(items) => Ok(Ok(items)),
        Value::String(s) if tabular => match list_literal(&s) {
            Some(Some(items)) => Ok(Ok(items)),
            Some(None) => Err(DatasetErrorKind::WrongType {
                expected,
                found: "a cell that starts like a list but does not parse as a json or python list"
                    .to_string(),
            }),
            None => Ok(Err(Value::String(s))),
        },
        other => Ok(Err(other)),
    }
}

/// A list of strings; a single string is a one-element list.
fn text_list(value: Value, tabular: bool) -> Result<Vec<String>, DatasetErrorKind> {
    const EXPECTED: &str = "a string or a list of strings";
    match elements(value, tabular, EXPECTED)? {
        Ok(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s),
                other => Err(wrong_item(EXPECTED, &other, i)),
            })
            .collect(),
        Err(Value::String(s)) => Ok(vec![s]),
        Err(other) => Err(wrong(EXPECTED, &other)),
    }
}

/// A list of ids (strings or numbers). Where values have types (JSON, Parquet, traces) it
/// must be a list: a string there (`"d1,d2"`) would pass as one id no retrieved id ever
/// equals, silently scoring 0. A table cell, always text, may hold one id, but not two
/// joined by `,` or `;` — those need a list literal (`['d1', 'd2']`).
fn id_list(value: Value, tabular: bool) -> Result<Vec<String>, DatasetErrorKind> {
    const EXPECTED: &str = "an id or a list of ids (strings or numbers)";
    if !tabular && !matches!(value, Value::Array(_)) {
        return Err(wrong("a list of ids (strings or numbers)", &value));
    }
    if let Value::String(cell) = &value {
        let trimmed = cell.trim();
        if tabular && !trimmed.starts_with('[') && trimmed.contains([',', ';']) {
            return Err(DatasetErrorKind::WrongType {
                expected: "one id, or a list literal of ids (['d1', 'd2'])",
                found: "ids joined by `,` or `;`".into(),
            });
        }
    }
    match elements(value, tabular, EXPECTED)? {
        Ok(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(wrong_item(EXPECTED, &other, i)),
            })
            .collect(),
        Err(Value::String(s)) => Ok(vec![s]),
        Err(Value::Number(n)) => Ok(vec![n.to_string()]),
        Err(other) => Err(wrong(EXPECTED, &other)),
    }
}

/// A list of finite numbers; in a table a single number is a one-element list.
fn numbers(value: Value, tabular: bool) -> Result<Vec<f64>, DatasetErrorKind> {
    const EXPECTED: &str = "a list of numbers";
    let number = |item: &Value| match item {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if tabular => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
        _ => None,
    };
    match elements(value, tabular, EXPECTED)? {
        Ok(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| number(item).ok_or_else(|| wrong_item(EXPECTED, item, i)))
            .collect(),
        Err(single) => match number(&single) {
            Some(x) if tabular => Ok(vec![x]),
            _ => Err(wrong(EXPECTED, &single)),
        },
    }
}

/// Retrieved contexts: strings, `{text|content|page_content, id?, score?}` objects, or one
/// string.
pub(crate) fn contexts(value: Value, tabular: bool) -> Result<Vec<Context>, DatasetErrorKind> {
    const EXPECTED: &str = "a string or a list of strings or {text, id, score} objects";
    match elements(value, tabular, EXPECTED)? {
        Ok(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(Context::text(s)),
                Value::Object(object) => context_object(object, i),
                other => Err(wrong_item(EXPECTED, &other, i)),
            })
            .collect(),
        Err(Value::String(s)) => Ok(vec![Context::text(s)]),
        Err(other) => Err(wrong(EXPECTED, &other)),
    }
}

/// One context object, as LangChain documents and many retrievers serialise them.
fn context_object(
    object: Map<String, Value>,
    position: usize,
) -> Result<Context, DatasetErrorKind> {
    let at = |what: &str| format!("{what} at position {}", position + 1);
    let text = ["text", "content", "page_content"]
        .iter()
        .find_map(|key| object.get(*key));
    let text = match text {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(DatasetErrorKind::WrongType {
                expected: "a string context text",
                found: at(&describe(other)),
            });
        }
        None => {
            return Err(DatasetErrorKind::WrongType {
                expected: "a context object with `text`, `content` or `page_content`",
                found: at("an object without them"),
            });
        }
    };
    let id = match object.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            return Err(DatasetErrorKind::WrongType {
                expected: "a string or number context id",
                found: at(&describe(other)),
            });
        }
    };
    let score = match object.get("score") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(other) => {
            return Err(DatasetErrorKind::WrongType {
                expected: "a numeric context score",
                found: at(&describe(other)),
            });
        }
    };
    let hop = match object.get("hop") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n >= 1) => {
            n.as_u64().and_then(|n| usize::try_from(n).ok())
        }
        Some(other) => {
            return Err(DatasetErrorKind::WrongType {
                expected: "a context hop of 1 or more",
                found: at(&describe(other)),
            });
        }
    };
    Ok(Context {
        id,
        text,
        score,
        hop,
    })
}

/// A table cell holding a list: `None` when it does not look like one (so it is a single
/// value), `Some(None)` when it looks like one but does not parse.
fn list_literal(cell: &str) -> Option<Option<Vec<Value>>> {
    let trimmed = cell.trim();
    // Both ends must be brackets: a context such as "[1] Smith et al." is plain text.
    if !(trimmed.starts_with('[') && trimmed.ends_with(']')) {
        return None;
    }
    if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(trimmed) {
        return Some(Some(items));
    }
    Some(python_list(trimmed))
}

/// Parses a Python list repr of strings and numbers (`['a', "b's", 0.5, None]`).
fn python_list(input: &str) -> Option<Vec<Value>> {
    let mut chars = input.chars().peekable();
    let skip_space = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
    };
    if chars.next()? != '[' {
        return None;
    }
    let mut items = Vec::new();
    loop {
        skip_space(&mut chars);
        match chars.peek()? {
            ']' => {
                chars.next();
                break;
            }
            '\'' | '"' => {
                let quote = chars.next()?;
                items.push(Value::String(python_string(&mut chars, quote)?));
            }
            _ => {
                let mut token = String::new();
                while let Some(&c) = chars.peek() {
                    if c == ',' || c == ']' || c.is_whitespace() {
                        break;
                    }
                    token.push(c);
                    chars.next();
                }
                items.push(python_scalar(&token)?);
            }
        }
        skip_space(&mut chars);
        match chars.next()? {
            ',' => continue,
            ']' => break,
            _ => return None,
        }
    }
    skip_space(&mut chars);
    chars.next().is_none().then_some(items)
}

/// The body of a quoted Python string after its opening quote, escapes decoded.
fn python_string(chars: &mut impl Iterator<Item = char>, quote: char) -> Option<String> {
    let mut out = String::new();
    loop {
        match chars.next()? {
            c if c == quote => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                '0' => out.push('\0'),
                'x' => out.push(hex_char(chars, 2)?),
                'u' => out.push(hex_char(chars, 4)?),
                'U' => out.push(hex_char(chars, 8)?),
                c @ ('\\' | '\'' | '"') => out.push(c),
                other => {
                    out.push('\\');
                    out.push(other);
                }
            },
            c => out.push(c),
        }
    }
}

fn hex_char(chars: &mut impl Iterator<Item = char>, digits: usize) -> Option<char> {
    let hex: String = chars.take(digits).collect();
    if hex.len() != digits {
        return None;
    }
    char::from_u32(u32::from_str_radix(&hex, 16).ok()?)
}

/// A bare Python token: a number, `None`, `True` or `False`.
fn python_scalar(token: &str) -> Option<Value> {
    match token {
        "None" => Some(Value::Null),
        "True" => Some(Value::Bool(true)),
        "False" => Some(Value::Bool(false)),
        _ => {
            if let Ok(i) = token.parse::<i64>() {
                return Some(Value::Number(i.into()));
            }
            Number::from_f64(token.parse::<f64>().ok()?).map(Value::Number)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn build(record: Value, tabular: bool) -> Result<Sample, DatasetError> {
        let Value::Object(map) = record else {
            panic!("test record must be an object")
        };
        RecordBuilder::new(Path::new("t.jsonl"), FieldMap::default(), tabular).build(1, map)
    }

    #[test]
    fn seen_ids_keep_the_first_line_even_past_32_bits() {
        let mut seen = SeenIds::default();
        let (near, far, other) = (IdKey::of("a"), IdKey::of("b"), IdKey::of("c"));
        let far_line = usize::try_from(u64::from(u32::MAX) + 7).unwrap();
        seen.insert(near, 3);
        seen.insert(far, far_line);
        seen.insert(near, 9);
        assert_eq!(seen.first_line(near), Some(3));
        assert_eq!(seen.first_line(far), Some(far_line));
        assert_eq!(seen.first_line(other), None);
        assert_ne!(near, far);
    }

    #[test]
    fn ragas_v02_names_fill_the_sample() {
        let sample = build(
            json!({"user_input": "q", "retrieved_contexts": ["a", "b"], "response": "r",
                   "reference": ["gold"], "retrieved_context_ids": ["1", 2],
                   "retrieved_context_scores": [0.9, 0.5], "extra": 7}),
            false,
        )
        .unwrap();
        assert_eq!(sample.id, "1");
        assert_eq!(sample.question, "q");
        assert_eq!(sample.answer.as_deref(), Some("r"));
        assert_eq!(sample.references, vec!["gold"]);
        assert_eq!(sample.contexts[1].id.as_deref(), Some("2"));
        assert_eq!(sample.contexts[0].score, Some(0.9));
        assert_eq!(sample.metadata.get("extra"), Some(&json!(7)));
    }

    /// Regression (issue 40, item 15): a string where a list of ids is expected passed as
    /// one id (`"d1,d2"`), scoring every id metric 0 without a word. It is an error naming
    /// the file, line and field; a table cell may still hold one id.
    #[test]
    fn regression_issue_40_a_string_where_a_list_of_ids_is_expected_is_an_error() {
        for field in ["retrieved_context_ids", "reference_context_ids"] {
            let mut record = json!({"question": "q", "retrieved_contexts": ["a", "b"]});
            record[field] = json!("d1,d2");
            let error = build(record.clone(), false).unwrap_err().to_string();
            assert!(
                error.starts_with(&format!("t.jsonl:1: field `{field}`: "))
                    && error.contains("a list of ids")
                    && error.contains("found a string"),
                "{error}"
            );
            let cell = build(record, true).unwrap_err().to_string();
            assert!(cell.contains("joined by `,` or `;`"), "{cell}");
        }
        let one = build(
            json!({"question": "q", "reference_context_ids": "d1"}),
            true,
        )
        .unwrap();
        assert_eq!(one.reference_context_ids, ["d1"]);
    }

    /// A null, empty or blank answer is no answer: the sample reads, and every metric that
    /// needs the answer is `undefined` for it (`sample has no response`), never scored on an
    /// empty text.
    #[test]
    fn a_null_or_empty_answer_is_no_answer() {
        for answer in [json!(null), json!(""), json!("  ")] {
            let sample = build(json!({"question": "q", "answer": answer}), false).unwrap();
            assert!(
                sample.answer.as_deref().is_none_or(|a| a.trim().is_empty()),
                "{answer}"
            );
        }
    }

    #[test]
    fn empty_string_id_is_named_as_such() {
        let error = build(json!({"id": "", "question": "q"}), false).unwrap_err();
        assert!(
            error.to_string().contains("found an empty string"),
            "{error}"
        );
    }

    #[test]
    fn context_objects_and_single_strings() {
        let sample = build(
            json!({"question": "q", "contexts": [{"page_content": "x", "id": 3, "score": 1.5}, {"content": "y"}]}),
            false,
        )
        .unwrap();
        assert_eq!(
            sample.contexts[0],
            Context {
                id: Some("3".into()),
                text: "x".into(),
                score: Some(1.5),
                hop: None,
            }
        );
        assert_eq!(sample.contexts[1], Context::text("y"));
        let sample = build(
            json!({"question": "q", "contexts": "only", "ground_truth": "g"}),
            false,
        )
        .unwrap();
        assert_eq!(sample.contexts, vec![Context::text("only")]);
        assert_eq!(sample.references, vec!["g"]);
    }

    #[test]
    fn wrong_types_name_the_column() {
        let error = build(json!({"question": "q", "contexts": 3}), false).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("contexts"));
        assert!(error.to_string().contains("found a number (3)"), "{error}");
        let error = build(
            json!({"question": "q", "contexts": ["a"], "context_scores": [1, 2]}),
            false,
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("length 2 differs from the number of contexts (1)"),
            "{error}"
        );
        let error = build(json!({"user_input": ""}), false).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("user_input"));
    }

    #[test]
    fn table_cells_hold_json_or_python_lists() {
        let sample = build(
            json!({"question": "q", "contexts": "['a', \"b's\", 'c\\n']", "reference": "[\"x\", \"y\"]",
                   "context_scores": "", "answer": "[1] not a list"}),
            true,
        )
        .unwrap();
        let texts: Vec<&str> = sample.contexts.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["a", "b's", "c\n"]);
        assert_eq!(sample.references, vec!["x", "y"]);
        assert_eq!(sample.answer.as_deref(), Some("[1] not a list"));
    }

    #[test]
    fn python_lists_parse() {
        assert_eq!(
            python_list("['a', 'b']"),
            Some(vec![json!("a"), json!("b")])
        );
        assert_eq!(
            python_list("[\"it's\", 'x\\'y', 0.5, None,]"),
            Some(vec![json!("it's"), json!("x'y"), json!(0.5), Value::Null])
        );
        assert_eq!(python_list("[]"), Some(vec![]));
        assert_eq!(python_list("['a' 'b']"), None);
        assert_eq!(python_list("['unterminated]"), None);
        assert_eq!(python_list("['\\u4e2d\\x41']"), Some(vec![json!("中A")]));
    }

    #[test]
    fn numbered_id_colliding_with_data_id_is_a_duplicate() {
        // Record 1 has no id and is numbered "1"; record 2 then claims id 1 explicitly.
        let mut builder = RecordBuilder::new(Path::new("t.jsonl"), FieldMap::default(), false);
        let Value::Object(first) = json!({"question": "q"}) else {
            unreachable!()
        };
        let Value::Object(second) = json!({"id": 1, "question": "q"}) else {
            unreachable!()
        };
        assert_eq!(builder.build(1, first).unwrap().id, "1");
        let error = builder.build(2, second).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("duplicate id `1`, first used on line 1"),
            "{error}"
        );
    }

    #[test]
    fn duplicate_ids_name_the_first_line() {
        let mut builder = RecordBuilder::new(Path::new("t.jsonl"), FieldMap::default(), false);
        let record = |id: &str| {
            let Value::Object(map) = json!({"id": id, "question": "q"}) else {
                unreachable!()
            };
            map
        };
        builder.build(1, record("a")).unwrap();
        let error = builder.build(4, record("a")).unwrap_err();
        assert_eq!(error.line, Some(4));
        assert!(
            error.to_string().contains("first used on line 1"),
            "{error}"
        );
    }
}
