//! `collect --show-settings`: the resolved settings as TOML-like `key  value` lines, one
//! `[name]` section per source, secrets already masked by the sources. Also the named
//! settings an empty-result hint quotes ([`Section::pick`]).

use rageval_sources::{ContextSource, Generator};

use crate::cli::{CollectArgs, RetrieverKind};

/// Named settings of one source, as `--show-settings` prints them under `[name]`.
#[derive(Debug, Clone)]
pub(super) struct Section {
    pub(super) name: &'static str,
    settings: Vec<(&'static str, String)>,
}

impl Section {
    pub(super) fn new(name: &'static str, settings: Vec<(&'static str, String)>) -> Self {
        Section { name, settings }
    }

    /// `key value` pairs of the settings named by `keys`, in that order.
    pub(super) fn pick(&self, keys: &[&str]) -> String {
        keys.iter()
            .filter_map(|key| {
                let (_, value) = self.settings.iter().find(|(name, _)| name == key)?;
                Some(format!("{key} {value}"))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The sections as TOML-like lines, values aligned: the unnamed one first, then `[name]`
/// and its keys for each other.
pub(super) fn render(sections: &[Section]) -> String {
    let width = sections
        .iter()
        .flat_map(|s| &s.settings)
        .map(|(key, _)| key.chars().count())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for section in sections {
        if !section.name.is_empty() {
            text.push_str(&format!("\n[{}]\n", section.name));
        }
        for (key, value) in &section.settings {
            text.push_str(&format!("{key:<width$}  {value}\n"));
        }
    }
    text
}

/// Every section `--show-settings` prints: the run's own settings (unnamed), then the
/// retriever's (unless the service retrieves) and the service's.
pub(super) fn sections(
    args: &CollectArgs,
    contexts: &ContextSource,
    generator: &dyn Generator,
    concurrency: usize,
    retriever: Option<&Section>,
    service: Option<&Section>,
) -> Vec<Section> {
    let described = match contexts {
        ContextSource::Retriever(r) => r.describe(),
        ContextSource::Generator => "the service's answer".into(),
    };
    let run = Section::new(
        "",
        vec![
            ("questions", args.questions.display().to_string()),
            ("out", args.out.display().to_string()),
            ("retriever", described),
            ("generator", generator.describe()),
            ("concurrency", concurrency.to_string()),
            ("fail_on_empty", args.fail_on_empty.to_string()),
        ],
    );
    let mut sections = vec![run];
    if args.retriever != RetrieverKind::Http {
        sections.extend(retriever.cloned());
    }
    sections.extend(service.cloned());
    sections
}
