//! The sampling plan of a generated test set: which chunk (or pair of chunks) each item is
//! written from, and in which category — seeded, explicit, and the same on every machine.
//!
//! Coverage by document: primary chunks are drawn round-robin over the documents (each
//! document's chunks in a seeded order), so no file gets a second item before every file
//! has one, and `per_document` caps how many items one document gives. Categories are
//! assigned by their target shares (largest remainder over the size), in a seeded order.
//! A multi-hop or comparison item gets, as its second chunk, the chunk sharing the most
//! keywords with its first (jieba words for Chinese); with fewer than [`MIN_SHARED_KEYWORDS`]
//! in common anywhere it falls back to a fact item, and the plan counts it.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{Category, SourceChunk};
use crate::stats::SplitMix64;
use crate::text::words;

/// Keywords two chunks must share to make a two-chunk item.
pub const MIN_SHARED_KEYWORDS: usize = 2;
/// Keywords found in more than this share of the chunks (and in more than two) tie
/// everything to everything ("children", "我们"): pairing ignores them.
pub const COMMON_KEYWORD_SHARE: f64 = 0.2;
/// Chunks shorter than this (in characters) carry too little to ask about: a title, a
/// page number.
pub const DEFAULT_MIN_CHUNK_CHARS: usize = 80;

/// Target share of each category (weights; they need not sum to 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shares(pub BTreeMap<Category, f64>);

impl Default for Shares {
    fn default() -> Self {
        Shares(BTreeMap::from([
            (Category::Fact, 0.30),
            (Category::Numeric, 0.15),
            (Category::MultiHop, 0.20),
            (Category::Comparison, 0.10),
            (Category::Unanswerable, 0.15),
            (Category::FollowUp, 0.10),
        ]))
    }
}

impl Shares {
    /// `fact=0.5,numeric=0.2,...`: the categories named get these weights, the others none.
    pub fn parse(text: &str) -> Result<Shares, String> {
        let mut shares = BTreeMap::new();
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, weight) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not CATEGORY=SHARE"))?;
            let category: Category = name.parse()?;
            let weight: f64 = weight
                .trim()
                .parse()
                .ok()
                .filter(|w: &f64| w.is_finite() && *w >= 0.0)
                .ok_or_else(|| format!("the share of {category} must be a number ≥ 0"))?;
            shares.insert(category, weight);
        }
        if shares.values().sum::<f64>() <= 0.0 {
            return Err("the shares must name at least one category with a share above 0".into());
        }
        Ok(Shares(shares))
    }

    /// Each category's share of the whole, summing to 1.
    pub fn normalized(&self) -> BTreeMap<Category, f64> {
        let total: f64 = self.0.values().sum();
        self.0
            .iter()
            .filter(|(_, w)| **w > 0.0)
            .map(|(c, w)| (*c, w / total))
            .collect()
    }
}

/// How many items of each category `size` items hold: largest remainder (Hamilton), ties to
/// the earlier category.
pub fn quotas(size: usize, shares: &Shares) -> BTreeMap<Category, usize> {
    let normalized = shares.normalized();
    let exact: Vec<(Category, f64)> = normalized
        .iter()
        .map(|(c, share)| (*c, share * size as f64))
        .collect();
    let mut counts: BTreeMap<Category, usize> = exact
        .iter()
        .map(|(c, x)| (*c, x.floor() as usize))
        .collect();
    let mut left = size - counts.values().sum::<usize>();
    let mut by_remainder = exact.clone();
    by_remainder.sort_by(|a, b| (b.1 - b.1.floor()).total_cmp(&(a.1 - a.1.floor())));
    for (category, _) in by_remainder {
        if left == 0 {
            break;
        }
        *counts.entry(category).or_default() += 1;
        left -= 1;
    }
    counts
}

/// What the plan is asked to draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSettings {
    /// Items to plan.
    pub size: usize,
    /// Seed of every draw.
    pub seed: u64,
    /// Items one document may give, at most (`None`: no cap).
    pub per_document: Option<usize>,
    /// Chunks shorter than this are never drawn.
    pub min_chunk_chars: usize,
    /// Target category shares.
    pub shares: Shares,
}

/// One planned item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    /// The item's id (`t0001`, ...).
    pub id: String,
    /// The category it is written in.
    pub category: Category,
    /// The category the shares gave it, when a fallback changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Category>,
    /// Indices of its chunks in the source's chunk list: one, or two for multi-hop and
    /// comparison.
    pub chunks: Vec<usize>,
}

/// The plan: its slots and what kept it from the settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub slots: Vec<Slot>,
    /// Items per category the shares ask for.
    pub quotas: BTreeMap<Category, usize>,
    /// Chunks never drawn because they are shorter than the minimum.
    pub short_chunks: usize,
    /// Two-chunk items that fell back to fact: no chunk shares enough keywords.
    pub fallbacks: usize,
    /// Items the per-document cap left unplanned.
    pub capped: usize,
}

/// Plans `settings.size` items over `chunks`; `Err` says why nothing can be planned.
pub fn plan(chunks: &[SourceChunk], settings: &PlanSettings) -> Result<Plan, String> {
    let eligible: Vec<usize> = (0..chunks.len())
        .filter(|&i| chunks[i].text.trim().chars().count() >= settings.min_chunk_chars)
        .collect();
    if eligible.is_empty() {
        return Err(format!(
            "none of the {} chunks has {} characters or more to ask about",
            chunks.len(),
            settings.min_chunk_chars
        ));
    }
    let mut rng = SplitMix64::new(settings.seed);
    let primaries = primaries(chunks, &eligible, settings, &mut rng);
    let quotas = quotas(settings.size, &settings.shares);
    let mut categories: Vec<Category> = quotas
        .iter()
        .flat_map(|(c, n)| std::iter::repeat_n(*c, *n))
        .collect();
    shuffle(&mut categories, &mut rng);
    let keywords = distinctive(
        eligible
            .iter()
            .map(|&i| (i, keywords(&chunks[i].text)))
            .collect(),
    );
    let mut fallbacks = 0;
    let slots = primaries
        .iter()
        .zip(categories)
        .enumerate()
        .map(|(n, (&primary, category))| {
            let mut slot = Slot {
                id: format!("t{:04}", n + 1),
                category,
                planned: None,
                chunks: vec![primary],
            };
            if category.needs_two_chunks() {
                match partner(primary, &keywords) {
                    Some(second) => slot.chunks.push(second),
                    None => {
                        fallbacks += 1;
                        slot.planned = Some(category);
                        slot.category = Category::Fact;
                    }
                }
            }
            slot
        })
        .collect::<Vec<_>>();
    Ok(Plan {
        capped: settings.size - slots.len(),
        slots,
        quotas,
        short_chunks: chunks.len() - eligible.len(),
        fallbacks,
    })
}

/// The first chunk of each item: round-robin over the documents (in a seeded order), each
/// document's chunks in a seeded order, starting over once every chunk is used, never more
/// than the cap per document.
fn primaries(
    chunks: &[SourceChunk],
    eligible: &[usize],
    settings: &PlanSettings,
    rng: &mut SplitMix64,
) -> Vec<usize> {
    let mut documents: Vec<(&str, Vec<usize>)> = Vec::new();
    for &i in eligible {
        match documents.iter_mut().find(|(d, _)| *d == chunks[i].document) {
            Some((_, list)) => list.push(i),
            None => documents.push((&chunks[i].document, vec![i])),
        }
    }
    shuffle(&mut documents, rng);
    for (_, list) in &mut documents {
        shuffle(list, rng);
    }
    let cap = settings.per_document.unwrap_or(usize::MAX);
    let mut used = vec![0usize; documents.len()];
    let mut out = Vec::with_capacity(settings.size);
    while out.len() < settings.size {
        let before = out.len();
        for (d, (_, list)) in documents.iter().enumerate() {
            if out.len() == settings.size {
                break;
            }
            if used[d] < cap {
                out.push(list[used[d] % list.len()]);
                used[d] += 1;
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

/// The chunk sharing the most keywords with `primary` (at least [`MIN_SHARED_KEYWORDS`]);
/// ties go to the earlier chunk.
fn partner(primary: usize, keywords: &BTreeMap<usize, BTreeSet<String>>) -> Option<usize> {
    let own = keywords.get(&primary)?;
    keywords
        .iter()
        .filter(|(i, _)| **i != primary)
        .map(|(i, words)| (*i, own.intersection(words).count()))
        .filter(|(_, shared)| *shared >= MIN_SHARED_KEYWORDS)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(i, _)| i)
}

/// `keywords` without those common to many chunks ([`COMMON_KEYWORD_SHARE`]).
fn distinctive(
    mut keywords: BTreeMap<usize, BTreeSet<String>>,
) -> BTreeMap<usize, BTreeSet<String>> {
    let mut chunks_with: BTreeMap<String, usize> = BTreeMap::new();
    for words in keywords.values() {
        for word in words {
            *chunks_with.entry(word.clone()).or_default() += 1;
        }
    }
    let most = (COMMON_KEYWORD_SHARE * keywords.len() as f64).floor() as usize;
    let most = most.max(2);
    for words in keywords.values_mut() {
        words.retain(|w| chunks_with.get(w).is_some_and(|n| *n <= most));
    }
    keywords
}

/// The words of `text` that can tie two passages together: Chinese words of two characters
/// or more, other words of four letters or more; no numbers.
pub fn keywords(text: &str) -> BTreeSet<String> {
    words(text)
        .into_iter()
        .filter(|w| !w.chars().all(|c| c.is_numeric() || c == '.' || c == ','))
        .filter(|w| {
            let han = w
                .chars()
                .filter(|c| crate::text::language::is_han(*c))
                .count();
            han >= 2 || (han == 0 && w.chars().count() >= 4)
        })
        .collect()
}

/// Fisher–Yates with the plan's generator.
fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, document: &str, text: &str) -> SourceChunk {
        SourceChunk {
            id: id.into(),
            document: document.into(),
            location: String::new(),
            text: text.into(),
        }
    }

    fn settings(size: usize) -> PlanSettings {
        PlanSettings {
            size,
            seed: 7,
            per_document: None,
            min_chunk_chars: 10,
            shares: Shares::default(),
        }
    }

    fn corpus() -> Vec<SourceChunk> {
        vec![
            chunk(
                "a1",
                "a.md",
                "Scratch teaches children programming with blocks.",
            ),
            chunk(
                "a2",
                "a.md",
                "Python courses follow Scratch for older children.",
            ),
            chunk("a3", "a.md", "short"),
            chunk(
                "b1",
                "b.md",
                "Robotics kits cost parents about 3000 yuan yearly.",
            ),
            chunk(
                "c1",
                "c.md",
                "Competitions reward children programming Python skills.",
            ),
            chunk(
                "d1",
                "d.md",
                "Robotics competitions in Shenzhen award medals yearly.",
            ),
            chunk(
                "d2",
                "d.md",
                "Shenzhen robotics medals went to twelve schools.",
            ),
        ]
    }

    #[test]
    fn quotas_sum_to_the_size_and_follow_the_shares() {
        for size in [0, 1, 7, 20, 101] {
            let q = quotas(size, &Shares::default());
            assert_eq!(q.values().sum::<usize>(), size);
        }
        let q = quotas(20, &Shares::default());
        assert_eq!(q[&Category::Fact], 6);
        assert_eq!(q[&Category::MultiHop], 4);
        let only = Shares::parse("fact=1,numeric=3").unwrap();
        assert_eq!(quotas(8, &only)[&Category::Numeric], 6);
        assert!(Shares::parse("fact=0").is_err());
        assert!(Shares::parse("facts=1").is_err());
        assert!(Shares::parse("fact=-1").is_err());
    }

    #[test]
    fn every_document_gets_an_item_before_any_gets_a_second() {
        let corpus = corpus();
        let plan = plan(&corpus, &settings(4)).unwrap();
        let documents: BTreeSet<&str> = plan
            .slots
            .iter()
            .map(|s| corpus[s.chunks[0]].document.as_str())
            .collect();
        assert_eq!(documents.len(), 4, "{plan:?}");
        assert_eq!(plan.short_chunks, 1);
    }

    #[test]
    fn the_same_seed_gives_the_same_plan_and_another_seed_another() {
        let a = plan(&corpus(), &settings(12)).unwrap();
        assert_eq!(a, plan(&corpus(), &settings(12)).unwrap());
        let mut other = settings(12);
        other.seed = 8;
        assert_ne!(a.slots, plan(&corpus(), &other).unwrap().slots);
    }

    #[test]
    fn the_cap_per_document_limits_the_plan() {
        let mut capped = settings(10);
        capped.per_document = Some(1);
        let plan = plan(&corpus(), &capped).unwrap();
        assert_eq!(plan.slots.len(), 4);
        assert_eq!(plan.capped, 6);
    }

    #[test]
    fn two_chunk_items_pair_chunks_that_share_keywords_or_fall_back() {
        let mut two = settings(4);
        two.shares = Shares::parse("multi_hop=1").unwrap();
        let plan = plan(&corpus(), &two).unwrap();
        assert!(plan.slots.iter().any(|s| s.chunks.len() == 2), "{plan:?}");
        for slot in &plan.slots {
            if slot.category == Category::MultiHop {
                let [first, second] = slot.chunks[..] else {
                    panic!("{slot:?}")
                };
                assert_ne!(first, second);
                let shared = keywords(&corpus()[first].text)
                    .intersection(&keywords(&corpus()[second].text))
                    .count();
                assert!(shared >= MIN_SHARED_KEYWORDS, "{slot:?}");
            } else {
                assert_eq!(slot.planned, Some(Category::MultiHop));
            }
        }
        assert_eq!(
            plan.fallbacks,
            plan.slots.iter().filter(|s| s.planned.is_some()).count()
        );
    }

    #[test]
    fn nothing_long_enough_is_an_error() {
        let mut long = settings(3);
        long.min_chunk_chars = 1000;
        assert!(plan(&corpus(), &long).is_err());
    }
}
