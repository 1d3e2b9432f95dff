//! [`ExtractEntities`]: the named entities of a text, each once (ragas context entity
//! recall). Only a chat model writes them; a blank text names nothing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{TaskFamily, TaskKind, TypedTask};
use crate::error::TaskError;
use crate::judged::Judged;
use crate::llm::{LlmTask, Part, clean_list, text};
use crate::prompt::pack::{PackFiles, pack_files};
use crate::router::TaskJudge;
use crate::schema::{Shape, object, text_list};

/// The named entities of `text`, each once (ragas context entity recall).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractEntities {
    /// The text.
    pub text: String,
}

#[derive(Deserialize)]
pub(crate) struct EntitiesRaw {
    entities: Vec<String>,
}

impl LlmTask for ExtractEntities {
    const KIND: TaskKind = TaskKind::ExtractEntities;
    const PACK: PackFiles = pack_files!("extract_entities");
    type Raw = EntitiesRaw;
    type Output = Vec<String>;
    fn schema(_: Shape) -> Value {
        object([("entities", text_list(None))])
    }
    fn deciding_text(&self) -> &str {
        &self.text
    }
    fn parts(&self) -> Vec<Part<'_>> {
        vec![text("text", &self.text)]
    }
    fn convert(&self, raw: EntitiesRaw) -> Result<Vec<String>, String> {
        Ok(clean_list(raw.entities))
    }
}

impl TypedTask for ExtractEntities {
    const FAMILY: TaskFamily = TaskFamily::Generation;

    /// A blank text has none.
    fn by_rule(&self) -> Result<Option<Judged<Vec<String>>>, TaskError> {
        Ok(self
            .text
            .trim()
            .is_empty()
            .then(|| Judged::by_rule(Vec::new(), "a blank text names nothing")))
    }
}

impl TaskJudge {
    /// [`ExtractEntities`]: a blank text has none (no call).
    pub async fn extract_entities(
        &self,
        task: &ExtractEntities,
    ) -> Result<Judged<Vec<String>>, TaskError> {
        self.ask(task).await
    }
}
