//! Searching a local index: BM25 over the chunk text, cosine over the chunk vectors, or both
//! fused by reciprocal rank ([`Ranking`]).
//!
//! A query is normalised and tokenised like the chunks were (so a query pasted from a PDF
//! with radical code points still matches) and becomes one `should` term clause per word,
//! as Elasticsearch's `match` query does; user text is never parsed as query syntax, so a
//! question with `:` or quotes cannot fail. Hybrid and vector ranking need the index to
//! hold vectors and the query to be embedded by the same model (checked by name).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rageval_core::Sample;
use rageval_judge::{AnyEmbedder, BoxFuture, Embedder};
use serde_json::{Map, Value, json};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value as _};
use tantivy::{DocAddress, Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument, Term};

use super::index::{
    FORMAT_VERSION, Fields, MANIFEST_FILE, Manifest, TANTIVY_DIR, register_tokenizer,
};
use super::normalize::normalize_text;
use super::tokenizer::TOKENIZER_NAME;
use super::vectors::{VECTORS_FILE, Vectors, reciprocal_rank_fusion};
use crate::error::SourceError;
use crate::system::{Retrieved, Retriever};

/// Candidates each ranking contributes to a fusion, at least.
pub const FUSION_CANDIDATES: usize = 100;

/// How chunks are ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ranking {
    /// BM25 over the words of the text.
    #[default]
    Bm25,
    /// Cosine similarity of embeddings.
    Vector,
    /// Reciprocal rank fusion of both.
    Hybrid,
}

impl Ranking {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Ranking::Bm25 => "bm25",
            Ranking::Vector => "vector",
            Ranking::Hybrid => "hybrid",
        }
    }

    /// The ranking named `bm25`, `vector` or `hybrid`.
    pub fn from_name(name: &str) -> Option<Ranking> {
        [Ranking::Bm25, Ranking::Vector, Ranking::Hybrid]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// An open local index.
pub struct LocalIndex {
    dir: PathBuf,
    manifest: Manifest,
    fields: Fields,
    reader: IndexReader,
    vectors: Option<Vectors>,
    /// Document address of each chunk ordinal (vector row); the reader never reloads, so
    /// addresses stay valid.
    addresses: Vec<DocAddress>,
    ords: HashMap<DocAddress, usize>,
}

impl std::fmt::Debug for LocalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalIndex")
            .field("dir", &self.dir)
            .field("chunks", &self.manifest.chunks)
            .field("embedding", &self.manifest.embedding)
            .finish_non_exhaustive()
    }
}

impl LocalIndex {
    /// Opens the index in `dir` (built by [`IndexBuilder`](super::IndexBuilder)).
    pub fn open(dir: &Path) -> Result<LocalIndex, SourceError> {
        let bad = |detail: String| SourceError::Index {
            path: dir.to_owned(),
            detail,
        };
        let manifest_path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&manifest_path).map_err(|e| {
            bad(format!(
                "no readable {MANIFEST_FILE} ({e}): not a complete rageval index"
            ))
        })?;
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| bad(format!("{MANIFEST_FILE} is not a manifest: {e}")))?;
        if manifest.format_version != FORMAT_VERSION || manifest.tokenizer != TOKENIZER_NAME {
            return Err(bad(format!(
                "built by {} in format {} with tokenizer {}; this rageval reads format {FORMAT_VERSION} with {TOKENIZER_NAME}: rebuild it with `rageval index`",
                manifest.created_by, manifest.format_version, manifest.tokenizer
            )));
        }
        let index = Index::open_in_dir(dir.join(TANTIVY_DIR)).map_err(|e| bad(e.to_string()))?;
        register_tokenizer(&index);
        let (_, fields) = Fields::schema();
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e: tantivy::TantivyError| bad(e.to_string()))?;
        let vectors = match &manifest.embedding {
            Some(embedding) => Some(Vectors::read(
                &dir.join(VECTORS_FILE),
                manifest.chunks,
                embedding.dims,
            )?),
            None => None,
        };
        let addresses = addresses_by_ord(&reader.searcher(), manifest.chunks)
            .map_err(|e| bad(e.to_string()))?;
        let ords = addresses
            .iter()
            .enumerate()
            .map(|(ord, a)| (*a, ord))
            .collect();
        Ok(LocalIndex {
            dir: dir.to_owned(),
            manifest,
            fields,
            reader,
            vectors,
            addresses,
            ords,
        })
    }

    /// Its manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Every chunk, in indexing order, with its source and location
    /// ([`SourceChunk`](rageval_core::testset::SourceChunk)s: `rageval testset` reads them).
    pub fn all_chunks(&self) -> Result<Vec<rageval_core::testset::SourceChunk>, SourceError> {
        let searcher = self.reader.searcher();
        let f = &self.fields;
        self.addresses
            .iter()
            .map(|address| {
                let doc: TantivyDocument = searcher.doc(*address).map_err(|e| self.failed(e))?;
                let text = |field| {
                    doc.get_first(field)
                        .and_then(|v| v.as_str())
                        .unwrap_or_default()
                        .to_owned()
                };
                let number = |field| {
                    doc.get_first(field)
                        .and_then(|v| v.as_u64())
                        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
                };
                Ok(rageval_core::testset::SourceChunk {
                    id: text(f.id),
                    document: text(f.source),
                    location: super::chunks::location((number(f.line_from), number(f.line_to))),
                    text: text(f.text),
                })
            })
            .collect()
    }

    /// The best `k` chunks for `query` by BM25.
    pub fn search_bm25(&self, query: &str, k: usize) -> Result<Vec<Retrieved>, SourceError> {
        let searcher = self.reader.searcher();
        let hits = self.bm25(&searcher, query, k)?;
        hits.into_iter()
            .map(|(score, address)| self.retrieved(&searcher, address, Some(f64::from(score))))
            .collect()
    }

    /// The best `k` chunks for an embedded query, by cosine.
    pub fn search_vector(&self, query: &[f32], k: usize) -> Result<Vec<Retrieved>, SourceError> {
        let searcher = self.reader.searcher();
        self.vectors()?
            .nearest(query, k)
            .into_iter()
            .map(|(row, score)| {
                self.retrieved(&searcher, self.addresses[row], Some(f64::from(score)))
            })
            .collect()
    }

    /// The best `k` chunks by reciprocal rank fusion of BM25 and cosine; the score is the
    /// fused score.
    pub fn search_hybrid(
        &self,
        query: &str,
        embedded: &[f32],
        k: usize,
    ) -> Result<Vec<Retrieved>, SourceError> {
        let searcher = self.reader.searcher();
        let candidates = k.max(FUSION_CANDIDATES);
        let lexical = self
            .bm25(&searcher, query, candidates)?
            .into_iter()
            .filter_map(|(_, address)| self.ords.get(&address).copied())
            .collect();
        let semantic = self
            .vectors()?
            .nearest(embedded, candidates)
            .into_iter()
            .map(|(row, _)| row)
            .collect();
        reciprocal_rank_fusion(&[lexical, semantic])
            .into_iter()
            .take(k)
            .map(|(row, score)| self.retrieved(&searcher, self.addresses[row], Some(score)))
            .collect()
    }

    /// Searches with `ranking`, embedding the query with `embedder` when the ranking needs
    /// it; the embedder must be the model the index was built with.
    pub async fn search<E: Embedder>(
        &self,
        query: &str,
        k: usize,
        ranking: Ranking,
        embedder: Option<&E>,
    ) -> Result<Vec<Retrieved>, SourceError> {
        if ranking == Ranking::Bm25 {
            return self.search_bm25(query, k);
        }
        let embedder = self.check_embedder(embedder, ranking)?;
        let vectors = embedder
            .embed(&[normalize_text(query)])
            .await
            .map_err(SourceError::Embedding)?;
        let embedded = vectors.first().map(Vec::as_slice).unwrap_or_default();
        match ranking {
            Ranking::Vector => self.search_vector(embedded, k),
            _ => self.search_hybrid(query, embedded, k),
        }
    }

    fn check_embedder<'e, E: Embedder>(
        &self,
        embedder: Option<&'e E>,
        ranking: Ranking,
    ) -> Result<&'e E, SourceError> {
        let bad = |detail: String| SourceError::Index {
            path: self.dir.clone(),
            detail,
        };
        let Some(built_with) = &self.manifest.embedding else {
            return Err(bad(format!(
                "{} ranking needs vectors, and this index was built without an embedding model",
                ranking.name()
            )));
        };
        let Some(embedder) = embedder else {
            return Err(bad(format!(
                "{} ranking needs the embedding model the index was built with ({})",
                ranking.name(),
                built_with.model
            )));
        };
        if embedder.embedding_model() != built_with.model {
            return Err(bad(format!(
                "the index was embedded with `{}`, the query would be embedded with `{}`",
                built_with.model,
                embedder.embedding_model()
            )));
        }
        Ok(embedder)
    }

    fn bm25(
        &self,
        searcher: &Searcher,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(f32, DocAddress)>, SourceError> {
        let clauses: Vec<(Occur, Box<dyn Query>)> =
            rageval_core::text::words(&normalize_text(query))
                .into_iter()
                .map(|word| {
                    let term = Term::from_field_text(self.fields.text, &word);
                    let query: Box<dyn Query> =
                        Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                    (Occur::Should, query)
                })
                .collect();
        if clauses.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        searcher
            .search(
                &BooleanQuery::new(clauses),
                &TopDocs::with_limit(limit).order_by_score(),
            )
            .map_err(|e| self.failed(e))
    }

    fn vectors(&self) -> Result<&Vectors, SourceError> {
        self.vectors.as_ref().ok_or_else(|| SourceError::Index {
            path: self.dir.clone(),
            detail: "this index holds no vectors: build it with an embedding model".into(),
        })
    }

    fn retrieved(
        &self,
        searcher: &Searcher,
        address: DocAddress,
        score: Option<f64>,
    ) -> Result<Retrieved, SourceError> {
        let doc: TantivyDocument = searcher.doc(address).map_err(|e| self.failed(e))?;
        let f = &self.fields;
        let text = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        let number = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
        let mut fields = Map::new();
        fields.insert("source".into(), Value::String(text(f.source)));
        fields.insert("chunk_index".into(), json!(number(f.chunk_index)));
        fields.insert(
            "lines".into(),
            json!({"from": number(f.line_from), "to": number(f.line_to)}),
        );
        Ok(Retrieved {
            id: text(f.id),
            text: text(f.text),
            score,
            fields,
        })
    }

    fn failed(&self, error: tantivy::TantivyError) -> SourceError {
        SourceError::Index {
            path: self.dir.clone(),
            detail: error.to_string(),
        }
    }
}

/// Document addresses indexed by chunk ordinal (the `ord` fast field).
fn addresses_by_ord(
    searcher: &Searcher,
    chunks: usize,
) -> Result<Vec<DocAddress>, tantivy::TantivyError> {
    let mut addresses = vec![DocAddress::new(0, 0); chunks];
    for (segment_ord, segment) in searcher.segment_readers().iter().enumerate() {
        let column = segment.fast_fields().u64("ord")?;
        for doc in segment.doc_ids_alive() {
            if let Some(slot) = column
                .first(doc)
                .and_then(|ord| addresses.get_mut(ord as usize))
            {
                *slot = DocAddress::new(segment_ord as u32, doc);
            }
        }
    }
    Ok(addresses)
}

/// The local index as a [`Retriever`]: top `k` by `ranking` for each question.
#[derive(Debug, Clone)]
pub struct LocalRetriever {
    index: Arc<LocalIndex>,
    k: usize,
    ranking: Ranking,
    embedder: Option<AnyEmbedder>,
}

impl LocalRetriever {
    /// A retriever over an open index; `embedder` is needed for vector and hybrid ranking.
    pub fn new(
        index: Arc<LocalIndex>,
        k: usize,
        ranking: Ranking,
        embedder: Option<AnyEmbedder>,
    ) -> Result<Self, SourceError> {
        if ranking != Ranking::Bm25 {
            index.check_embedder(embedder.as_ref(), ranking)?;
        }
        Ok(LocalRetriever {
            index,
            k,
            ranking,
            embedder,
        })
    }
}

impl Retriever for LocalRetriever {
    fn describe(&self) -> String {
        format!(
            "local index {} ({}, k={})",
            self.index.dir.display(),
            self.ranking.name(),
            self.k
        )
    }

    fn retrieve<'a>(
        &'a self,
        sample: &'a Sample,
    ) -> BoxFuture<'a, Result<Vec<Retrieved>, SourceError>> {
        Box::pin(self.index.search(
            &sample.question,
            self.k,
            self.ranking,
            self.embedder.as_ref(),
        ))
    }
}
