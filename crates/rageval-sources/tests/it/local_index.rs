//! The local index on seed S4's corpus: the 125 kids-coding chunks indexed as given, the
//! 100 questions written from them asked in Chinese, the chunk each was written from found
//! near the top; hybrid ranking with a deterministic embedder; and the index directory's
//! life cycle (complete or absent, never half-written; replaced only when asked).

use rageval_sources::local::{LocalIndex, Ranking, load};
use rageval_sources::{IndexBuilder, LocalRetriever, Retriever, SourceError, Splitter};
use std::sync::Arc;

use super::fixtures::{BigramEmbedder, kids_dir, kids_questions};

async fn build(out: &std::path::Path, embedder: Option<&BigramEmbedder>) -> LocalIndex {
    let mut builder = IndexBuilder::new(Splitter::default());
    let doc = load(&kids_dir().join("doc_chunks.jsonl")).unwrap();
    assert_eq!(builder.add(&doc).unwrap(), 125);
    builder.write(out, false, embedder).await.unwrap();
    LocalIndex::open(out).unwrap()
}

/// How many questions have their source chunk in the top `k`.
async fn hits_at(
    index: &LocalIndex,
    k: usize,
    ranking: Ranking,
    embedder: Option<&BigramEmbedder>,
) -> usize {
    let mut found = 0;
    for (question, gold) in kids_questions() {
        let hits = index.search(&question, k, ranking, embedder).await.unwrap();
        assert!(hits.len() <= k);
        if hits.iter().any(|h| h.id == gold) {
            found += 1;
        }
    }
    found
}

#[tokio::test]
async fn chinese_questions_find_the_chunks_they_were_written_from() {
    if super::fixtures::skip_without_kids(
        "chinese_questions_find_the_chunks_they_were_written_from",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let index = build(&dir.path().join("kids"), None).await;
    assert_eq!(index.manifest().chunks, 125);
    let top1 = hits_at(&index, 1, Ranking::Bm25, None).await;
    let top5 = hits_at(&index, 5, Ranking::Bm25, None).await;
    eprintln!("bm25: source chunk first for {top1}, in the top 5 for {top5} of 100");
    // Measured: first for 63, top 5 for 86 (BM25 is deterministic; a drop below the bounds
    // is a regression in tokenisation or scoring).
    assert!(top5 >= 85, "source chunk in the top 5 for {top5} of 100");
    assert!(top1 >= 60, "source chunk first for {top1} of 100");

    let hits = index
        .search_bm25("2024年少儿编程市场规模是多少", 3)
        .unwrap();
    assert!(hits.iter().any(|h| h.text.contains("488")), "{hits:#?}");
    for pair in hits.windows(2) {
        assert!(pair[0].score >= pair[1].score);
    }
    assert_eq!(
        hits[0].fields["source"],
        serde_json::json!(kids_dir().join("doc_chunks.jsonl").display().to_string())
    );
    assert!(
        index.search_bm25("？！，", 3).unwrap().is_empty(),
        "punctuation is no query"
    );
}

#[tokio::test]
async fn hybrid_ranking_fuses_bm25_and_vectors_from_the_same_model() {
    if super::fixtures::skip_without_kids(
        "hybrid_ranking_fuses_bm25_and_vectors_from_the_same_model",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let embedder = BigramEmbedder::default();
    let index = build(&dir.path().join("kids"), Some(&embedder)).await;
    let embedding = index.manifest().embedding.clone().unwrap();
    assert_eq!(
        (embedding.model.as_str(), embedding.dims),
        ("bigram-512", 512)
    );

    let vector = hits_at(&index, 5, Ranking::Vector, Some(&embedder)).await;
    let bm25 = hits_at(&index, 5, Ranking::Bm25, None).await;
    let hybrid = hits_at(&index, 5, Ranking::Hybrid, Some(&embedder)).await;
    eprintln!("top-5 hits of 100: bm25 {bm25}, vector {vector}, hybrid {hybrid}");
    // Measured: vector 58, hybrid 83, bm25 86 (the test embedder is crude; the point is that
    // fusion keeps BM25's quality while adding the vectors' candidates).
    assert!(
        vector >= 50,
        "the bigram vectors alone find {vector} of 100"
    );
    assert!(
        hybrid + 5 >= bm25.max(vector),
        "hybrid {hybrid}, bm25 {bm25}, vector {vector}"
    );

    // Fused scores: 1/(60 + rank) summed over the two rankings, best first.
    let hits = index
        .search(
            "少儿编程的渗透率是多少",
            5,
            Ranking::Hybrid,
            Some(&embedder),
        )
        .await
        .unwrap();
    assert!(hits[0].score.unwrap() <= 2.0 / 61.0 + 1e-12);
    assert!(hits.windows(2).all(|p| p[0].score >= p[1].score));

    let other = BigramEmbedder {
        model: "another-model",
    };
    let err = index
        .search("q", 3, Ranking::Hybrid, Some(&other))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("embedded with `bigram-512`"),
        "{err}"
    );
    let err = LocalRetriever::new(Arc::new(index), 3, Ranking::Hybrid, None).unwrap_err();
    assert!(
        err.to_string().contains("needs the embedding model"),
        "{err}"
    );

    let plain = build(&dir.path().join("plain"), None).await;
    let err = plain
        .search("q", 3, Ranking::Vector, Some(&embedder))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("built without an embedding model"),
        "{err}"
    );
}

#[tokio::test]
async fn the_retriever_answers_a_sample_with_ids_scores_and_lines() {
    if super::fixtures::skip_without_kids(
        "the_retriever_answers_a_sample_with_ids_scores_and_lines",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let index = Arc::new(build(&dir.path().join("kids"), None).await);
    let retriever = LocalRetriever::new(index, 3, Ranking::Bm25, None).unwrap();
    let sample = rageval_core::Sample {
        id: "1".into(),
        question: "少儿编程教育行业当前的发展动力主要来自哪些方面？".into(),
        ..Default::default()
    };
    let hits = retriever.retrieve(&sample).await.unwrap();
    assert_eq!(hits.len(), 3);
    let context = hits[0].to_context();
    assert!(context.id.is_some() && context.score.is_some_and(|s| s > 0.0));
    assert!(hits[0].fields["lines"]["from"].as_u64().unwrap() >= 1);
    assert!(retriever.describe().contains("bm25, k=3"));
}

#[tokio::test]
async fn an_index_is_complete_or_absent_and_replaced_only_when_asked() {
    if super::fixtures::skip_without_kids(
        "an_index_is_complete_or_absent_and_replaced_only_when_asked",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kids");
    build(&out, None).await;

    let mut builder = IndexBuilder::new(Splitter::default());
    builder
        .add(&load(&kids_dir().join("report_text_reconstructed.txt")).unwrap())
        .unwrap();
    let err = builder
        .clone()
        .write(&out, false, None::<&BigramEmbedder>)
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Exists { .. }), "{err:?}");
    assert_eq!(
        LocalIndex::open(&out).unwrap().manifest().chunks,
        125,
        "left untouched"
    );

    let manifest = builder
        .write(&out, true, None::<&BigramEmbedder>)
        .await
        .unwrap();
    assert!(
        manifest.chunks > 90 && manifest.chunks != 125,
        "{}",
        manifest.chunks
    );
    assert_eq!(
        LocalIndex::open(&out).unwrap().manifest().documents[0].kind,
        "text"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no staging or old directory left: {leftovers:?}"
    );

    // Duplicate ids: the same chunk file twice.
    let mut builder = IndexBuilder::new(Splitter::default());
    let doc = load(&kids_dir().join("doc_chunks.jsonl")).unwrap();
    builder.add(&doc).unwrap();
    builder.add(&doc).unwrap();
    let err = builder
        .write(&dir.path().join("dup"), false, None::<&BigramEmbedder>)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("appears twice"), "{err}");
    assert!(!dir.path().join("dup").exists());

    let err = LocalIndex::open(dir.path()).unwrap_err();
    assert!(
        err.to_string().contains("not a complete rageval index"),
        "{err}"
    );
}
