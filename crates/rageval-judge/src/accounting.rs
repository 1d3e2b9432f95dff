//! What the judge's calls cost: tokens per template, a price table, cost so far, and the
//! caps (`max_calls`, `max_cost_usd`) that refuse new calls once reached.
//!
//! Tokens come from the server's `usage`; when a server sends none they are counted with
//! tiktoken ([`crate::tokens`]) and the call is marked as counted. Cached answers cost
//! nothing now and are tallied apart, as are answers shared with an identical call in
//! flight. A cap is checked before a request is sent, reserving the call (and its estimated
//! cost) so that concurrent calls cannot overshoot it together; calls in flight always
//! finish. Answers that come through a provider's batch job cost the batch price (half the
//! list price unless the table says otherwise): a judge in batch mode books with
//! [`PriceTable::for_batch`]. This module keeps books; it never calls a model.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;

use crate::chat::{ChatRequest, Usage};
use crate::error::JudgeError;
use crate::tokens::DEFAULT_COMPLETION_ESTIMATE;

/// When the built-in prices were read off the providers' public price pages. Prices change:
/// override them in `rageval.toml` (`[judge.prices."MODEL"]`).
pub const BUILTIN_PRICES_AS_OF: &str = "2025-10";

/// Built-in list prices, USD per 1M tokens: (model, prompt, completion). Prompt prices are
/// the uncached ones (providers' prompt-cache discounts are not modelled).
const BUILTIN_PRICES: &[(&str, f64, f64)] = &[
    ("gpt-5", 1.25, 10.00),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4o-mini", 0.15, 0.60),
    // o1 and o3-mini: OpenAI's list prices as republished with their source
    // (platform.openai.com/docs/pricing) by aimodelcalc.pages.dev, "OpenAI API Pricing
    // Explained", May 2026, and for o3-mini by llmcalc.app/models/o3-mini (verified
    // 2026-05-06); read 2026-12-06.
    ("o1", 15.00, 60.00),
    ("o3", 2.00, 8.00),
    ("o3-mini", 1.10, 4.40),
    ("o4-mini", 1.10, 4.40),
    ("gpt-3.5-turbo", 0.50, 1.50),
    ("text-embedding-3-small", 0.02, 0.0),
    ("text-embedding-3-large", 0.13, 0.0),
    ("text-embedding-ada-002", 0.10, 0.0),
    ("deepseek-chat", 0.28, 0.42),
    ("deepseek-reasoner", 0.28, 0.42),
];

/// What a batch job costs against the synchronous price when the table names no batch price
/// for the model: OpenAI's and Azure OpenAI's batch APIs bill half the list price.
pub const DEFAULT_BATCH_DISCOUNT: f64 = 0.5;

/// A model's price, US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Price {
    /// Per million prompt (input) tokens.
    pub prompt_per_million: f64,
    /// Per million completion (output) tokens.
    pub completion_per_million: f64,
}

impl Price {
    /// What `usage` costs at this price.
    pub fn cost_usd(&self, usage: Usage) -> f64 {
        (usage.prompt_tokens as f64 * self.prompt_per_million
            + usage.completion_tokens as f64 * self.completion_per_million)
            / 1e6
    }

    /// This price times `factor`, both parts.
    pub fn scaled(&self, factor: f64) -> Price {
        Price {
            prompt_per_million: self.prompt_per_million * factor,
            completion_per_million: self.completion_per_million * factor,
        }
    }
}

/// Prices by model name: the synchronous price, and the batch price where it is not
/// [`DEFAULT_BATCH_DISCOUNT`] of it.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    prices: BTreeMap<String, Price>,
    batch_prices: BTreeMap<String, Price>,
}

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::builtin()
    }
}

impl PriceTable {
    /// The built-in table (see [`BUILTIN_PRICES_AS_OF`]).
    pub fn builtin() -> Self {
        let prices = BUILTIN_PRICES
            .iter()
            .map(|&(model, prompt, completion)| {
                let price = Price {
                    prompt_per_million: prompt,
                    completion_per_million: completion,
                };
                (model.to_owned(), price)
            })
            .collect();
        PriceTable {
            prices,
            batch_prices: BTreeMap::new(),
        }
    }

    /// A table with no price.
    pub fn empty() -> Self {
        PriceTable {
            prices: BTreeMap::new(),
            batch_prices: BTreeMap::new(),
        }
    }

    /// Sets (or overrides) one model's price.
    pub fn insert(&mut self, model: impl Into<String>, price: Price) {
        self.prices.insert(model.into(), price);
    }

    /// The price of `model`: an exact match, else the name without a provider prefix
    /// (`openai/gpt-4o`) or a dated snapshot suffix (`gpt-4o-2024-08-06`, `gpt-4-0613`).
    pub fn get(&self, model: &str) -> Option<Price> {
        lookup(&self.prices, model)
    }

    /// Sets (or overrides) one model's batch price.
    pub fn insert_batch(&mut self, model: impl Into<String>, price: Price) {
        self.batch_prices.insert(model.into(), price);
    }

    /// The price of `model` in a batch job: its batch price when one is set (looked up like
    /// [`PriceTable::get`]), else [`DEFAULT_BATCH_DISCOUNT`] of its synchronous price.
    pub fn batch_price(&self, model: &str) -> Option<Price> {
        lookup(&self.batch_prices, model)
            .or_else(|| self.get(model).map(|p| p.scaled(DEFAULT_BATCH_DISCOUNT)))
    }

    /// The table a judge whose every answer comes through a batch job books with: each
    /// model's price is its [`PriceTable::batch_price`].
    pub fn for_batch(&self) -> PriceTable {
        let names = self.prices.keys().chain(self.batch_prices.keys());
        let prices = names
            .filter_map(|name| Some((name.clone(), self.batch_price(name)?)))
            .collect();
        PriceTable {
            prices,
            batch_prices: BTreeMap::new(),
        }
    }
}

/// `model`'s entry: an exact match, else the name without a provider prefix or a snapshot
/// date.
fn lookup(prices: &BTreeMap<String, Price>, model: &str) -> Option<Price> {
    let unprefixed = model.rsplit('/').next().unwrap_or(model);
    [model, unprefixed, undated(unprefixed)]
        .into_iter()
        .find_map(|name| prices.get(name).copied())
}

/// `name` without a trailing `-YYYY-MM-DD` or `-NNNN` snapshot date.
fn undated(name: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = name.rsplitn(4, '-').collect();
    if parts.len() == 4
        && parts[0].len() == 2
        && parts[1].len() == 2
        && parts[2].len() == 4
        && parts[..3].iter().all(|p| digits(p))
    {
        return parts[3];
    }
    match name.rsplit_once('-') {
        Some((base, tail)) if tail.len() == 4 && digits(tail) => base,
        _ => name,
    }
}

/// Caps on a judge's spending. `None` means no cap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Budget {
    /// Most model calls answered (cached and shared answers are free and not counted;
    /// failed attempts are not answers).
    pub max_calls: Option<u64>,
    /// Most US dollars spent, at the price table's price for the model.
    pub max_cost_usd: Option<f64>,
}

/// Which cap stopped a call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cap {
    /// [`Budget::max_calls`].
    Calls(u64),
    /// [`Budget::max_cost_usd`].
    CostUsd(f64),
}

impl fmt::Display for Cap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cap::Calls(n) => write!(f, "max calls {n}"),
            Cap::CostUsd(usd) => write!(f, "max cost ${usd:.4}"),
        }
    }
}

/// Tokens and cost of one prompt template's calls (or of all, in [`UsageReport::total`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TemplateUsage {
    /// Calls answered by the model.
    pub calls: u64,
    /// Their prompt tokens.
    pub prompt_tokens: u64,
    /// Their completion tokens (thinking included).
    pub completion_tokens: u64,
    /// Of the completion tokens, those spent thinking (reported by the server, or counted
    /// from the thinking's text where it reported none).
    pub reasoning_tokens: u64,
    /// Of `calls`, those whose answer came after thinking.
    pub reasoning_calls: u64,
    /// Of `calls`, those whose server sent no usage: tokens counted with tiktoken.
    pub counted_calls: u64,
    /// Of `calls`, those for which no price was known (their cost is not in `cost_usd`).
    pub unpriced_calls: u64,
    /// Cost of `calls`, US dollars.
    pub cost_usd: f64,
    /// Calls answered from the cache, at no cost now.
    pub cached_calls: u64,
    /// Prompt tokens the cached answers took when they were made.
    pub cached_prompt_tokens: u64,
    /// Completion tokens the cached answers took when they were made.
    pub cached_completion_tokens: u64,
    /// Calls answered by an identical call that was in flight at the same time.
    pub shared_calls: u64,
}

impl TemplateUsage {
    fn add(&mut self, other: &TemplateUsage) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.reasoning_calls += other.reasoning_calls;
        self.counted_calls += other.counted_calls;
        self.unpriced_calls += other.unpriced_calls;
        self.cost_usd += other.cost_usd;
        self.cached_calls += other.cached_calls;
        self.cached_prompt_tokens += other.cached_prompt_tokens;
        self.cached_completion_tokens += other.cached_completion_tokens;
        self.shared_calls += other.shared_calls;
    }
}

/// Usage and cost so far, per template (`id@version`; embeddings under `embedding`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageReport {
    /// Per template.
    pub templates: BTreeMap<String, TemplateUsage>,
    /// All templates together.
    pub total: TemplateUsage,
}

impl UsageReport {
    /// The cost so far, or `None` when some answered call had no known price.
    pub fn cost_usd(&self) -> Option<f64> {
        (self.total.unpriced_calls == 0).then_some(self.total.cost_usd)
    }
}

/// Template name under which embedding calls are booked.
pub const EMBEDDING_TEMPLATE: &str = "embedding";

/// The books of one judge.
#[derive(Debug)]
pub(crate) struct Ledger {
    prices: PriceTable,
    budget: Budget,
    state: Mutex<LedgerState>,
}

#[derive(Debug, Default)]
struct LedgerState {
    templates: BTreeMap<String, TemplateUsage>,
    answered: u64,
    spent_usd: f64,
    pending_calls: u64,
    pending_usd: f64,
    /// The cap that first refused a call.
    refused: Option<Cap>,
    /// Per template, the most completion tokens one answer took: what the cost cap reserves
    /// for a later call of the template that sets no `max_tokens`, when it is more than the
    /// default estimate (a call that judges every claim of an answer writes more than 256).
    largest_completion: HashMap<String, u64>,
}

/// A call allowed by the caps and not yet answered. Dropping it unanswered (the attempt
/// failed or was cancelled) gives its share of the caps back.
#[derive(Debug)]
pub(crate) struct Reservation<'a> {
    ledger: &'a Ledger,
    cost_usd: f64,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut state = self.ledger.lock();
        state.pending_calls = state.pending_calls.saturating_sub(1);
        state.pending_usd = (state.pending_usd - self.cost_usd).max(0.0);
    }
}

impl Ledger {
    pub(crate) fn new(prices: PriceTable, budget: Budget) -> Self {
        Ledger {
            prices,
            budget,
            state: Mutex::new(LedgerState::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, LedgerState> {
        // Every update leaves the books consistent, so a poisoned lock is still usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a cost cap is set (only then is an estimate worth computing).
    pub(crate) fn caps_cost(&self) -> bool {
        self.budget.max_cost_usd.is_some()
    }

    /// Allows one more call to `model` expected to use `estimate`, or refuses it with
    /// [`JudgeError::BudgetExhausted`] when a cap would be passed.
    pub(crate) fn reserve(
        &self,
        model: &str,
        estimate: Usage,
    ) -> Result<Reservation<'_>, JudgeError> {
        let mut state = self.lock();
        let refuse = |cap, state: &mut LedgerState| {
            state.refused.get_or_insert(cap);
            JudgeError::BudgetExhausted {
                cap,
                calls: state.answered,
                cost_usd: state.spent_usd,
            }
        };
        if let Some(max) = self.budget.max_calls {
            if state.answered + state.pending_calls >= max {
                return Err(refuse(Cap::Calls(max), &mut state));
            }
        }
        let mut cost_usd = 0.0;
        if let Some(max) = self.budget.max_cost_usd {
            let price = self.prices.get(model).ok_or_else(|| {
                JudgeError::Settings(format!(
                    "a cost cap is set but model `{model}` has no price: add \
                     [judge.prices.\"{model}\"] to rageval.toml"
                ))
            })?;
            cost_usd = price.cost_usd(estimate);
            if state.spent_usd + state.pending_usd + cost_usd > max {
                return Err(refuse(Cap::CostUsd(max), &mut state));
            }
        }
        state.pending_calls += 1;
        state.pending_usd += cost_usd;
        Ok(Reservation {
            ledger: self,
            cost_usd,
        })
    }

    /// The completion tokens the cost cap reserves for a call of `template`: the request's
    /// `max_tokens` when it sets one (a bound), else the default estimate or the most an
    /// answer of the template has taken so far, whichever is more.
    pub(crate) fn completion_reserve(&self, template: &str, request: &ChatRequest) -> u64 {
        match request.sampling.max_tokens {
            Some(max) => u64::from(max),
            None => self
                .lock()
                .largest_completion
                .get(template)
                .copied()
                .unwrap_or(0)
                .max(DEFAULT_COMPLETION_ESTIMATE),
        }
    }

    /// Books an answered call (consuming its reservation). `counted`: the tokens were
    /// counted locally because the server sent no usage.
    pub(crate) fn answered(
        &self,
        reservation: Reservation<'_>,
        model: &str,
        template: &str,
        usage: Usage,
        counted: bool,
    ) {
        drop(reservation);
        let price = self.prices.get(model);
        let cost = price.map_or(0.0, |p| p.cost_usd(usage));
        let mut state = self.lock();
        state.answered += 1;
        state.spent_usd += cost;
        let largest = state
            .largest_completion
            .entry(template.to_owned())
            .or_default();
        *largest = (*largest).max(usage.completion_tokens);
        let entry = state.templates.entry(template.to_owned()).or_default();
        entry.calls += 1;
        entry.prompt_tokens += usage.prompt_tokens;
        entry.completion_tokens += usage.completion_tokens;
        entry.reasoning_tokens += usage.reasoning_tokens.unwrap_or(0);
        entry.reasoning_calls += u64::from(usage.reasoning_tokens.is_some());
        entry.counted_calls += u64::from(counted);
        entry.unpriced_calls += u64::from(price.is_none());
        entry.cost_usd += cost;
    }

    /// Books `count` answers from the cache that originally took `usage`.
    pub(crate) fn cached(&self, template: &str, count: u64, usage: Usage) {
        let mut state = self.lock();
        let entry = state.templates.entry(template.to_owned()).or_default();
        entry.cached_calls += count;
        entry.cached_prompt_tokens += usage.prompt_tokens;
        entry.cached_completion_tokens += usage.completion_tokens;
    }

    /// Books an answer shared with an identical call in flight.
    pub(crate) fn shared(&self, template: &str) {
        let mut state = self.lock();
        state
            .templates
            .entry(template.to_owned())
            .or_default()
            .shared_calls += 1;
    }

    /// The cap that first refused a call, if one has.
    pub(crate) fn refused(&self) -> Option<Cap> {
        self.lock().refused
    }

    pub(crate) fn report(&self) -> UsageReport {
        let state = self.lock();
        let mut total = TemplateUsage::default();
        for usage in state.templates.values() {
            total.add(usage);
        }
        UsageReport {
            templates: state.templates.clone(),
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, completion: u64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            reasoning_tokens: None,
        }
    }

    #[test]
    fn lookup_strips_prefixes_and_snapshot_dates() {
        let table = PriceTable::builtin();
        let mini = table.get("gpt-4o-mini").unwrap();
        assert_eq!(table.get("gpt-4o-mini-2024-07-18"), Some(mini));
        assert_eq!(table.get("openai/gpt-4o-mini"), Some(mini));
        assert_ne!(table.get("gpt-4o"), Some(mini));
        assert_eq!(undated("gpt-3.5-turbo-0125"), "gpt-3.5-turbo");
        assert_eq!(undated("qwen2.5-7b"), "qwen2.5-7b");
        assert!(table.get("llama-3-8b").is_none());
        let mut custom = PriceTable::empty();
        custom.insert("llama-3-8b", mini);
        assert_eq!(custom.get("llama-3-8b"), Some(mini));
    }

    #[test]
    fn batch_price_is_half_unless_the_table_says_otherwise() {
        let mut table = PriceTable::builtin();
        let mini = table.get("gpt-4o-mini").unwrap();
        assert_eq!(table.batch_price("gpt-4o-mini"), Some(mini.scaled(0.5)));
        assert_eq!(
            table.batch_price("openai/gpt-4o-mini-2024-07-18"),
            Some(mini.scaled(0.5))
        );
        let custom = Price {
            prompt_per_million: 0.1,
            completion_per_million: 0.2,
        };
        table.insert_batch("gpt-4o", custom);
        assert_eq!(table.batch_price("gpt-4o-2024-08-06"), Some(custom));
        assert_eq!(table.batch_price("llama-3-8b"), None);
        let batch = table.for_batch();
        assert_eq!(batch.get("gpt-4o"), Some(custom));
        assert_eq!(batch.get("gpt-4o-mini"), Some(mini.scaled(0.5)));
        // A batch price for a model with no synchronous price still counts.
        table.insert_batch("llama-3-8b", custom);
        assert_eq!(table.for_batch().get("llama-3-8b"), Some(custom));
    }

    #[test]
    fn cost_is_per_million_tokens() {
        let price = Price {
            prompt_per_million: 0.15,
            completion_per_million: 0.60,
        };
        let cost = price.cost_usd(usage(1_000_000, 500_000));
        assert!((cost - 0.45).abs() < 1e-12);
    }

    #[test]
    fn call_cap_counts_answers_and_reservations_not_failures() {
        let budget = Budget {
            max_calls: Some(2),
            max_cost_usd: None,
        };
        let ledger = Ledger::new(PriceTable::empty(), budget);
        assert_eq!(ledger.refused(), None);
        let first = ledger.reserve("m", usage(1, 1)).unwrap();
        let second = ledger.reserve("m", usage(1, 1)).unwrap();
        // Two in flight: a third is refused even before either answers.
        let refused = ledger.reserve("m", usage(1, 1)).unwrap_err();
        assert!(matches!(
            refused,
            JudgeError::BudgetExhausted {
                cap: Cap::Calls(2),
                calls: 0,
                ..
            }
        ));
        // A failed attempt gives its place back.
        drop(second);
        ledger.answered(first, "m", "t@1", usage(10, 5), false);
        let third = ledger.reserve("m", usage(1, 1)).unwrap();
        ledger.answered(third, "m", "t@1", usage(10, 5), true);
        assert_eq!(ledger.refused(), Some(Cap::Calls(2)));
        let refused = ledger.reserve("m", usage(1, 1)).unwrap_err();
        assert!(refused.to_string().contains("max calls 2"), "{refused}");
        let report = ledger.report();
        assert_eq!(report.total.calls, 2);
        assert_eq!(report.total.counted_calls, 1);
        assert_eq!(report.total.unpriced_calls, 2);
        assert_eq!(report.cost_usd(), None);
    }

    /// A template whose answers ran past the default estimate is reserved at its largest
    /// answer from then on, so later calls cannot pass the cost cap by the difference; a
    /// request with `max_tokens` is reserved at that bound whatever came before.
    #[test]
    fn a_template_is_reserved_at_its_largest_answer_so_far() {
        let ledger = Ledger::new(
            PriceTable::empty(),
            Budget {
                max_calls: None,
                max_cost_usd: None,
            },
        );
        let mut request = ChatRequest {
            messages: Vec::new(),
            sampling: crate::chat::Sampling::default(),
            response_schema: None,
        };
        assert_eq!(ledger.completion_reserve("t@1", &request), 256);
        let call = ledger.reserve("m", usage(10, 256)).unwrap();
        ledger.answered(call, "m", "t@1", usage(10, 365), false);
        assert_eq!(ledger.completion_reserve("t@1", &request), 365);
        let call = ledger.reserve("m", usage(10, 365)).unwrap();
        ledger.answered(call, "m", "t@1", usage(10, 40), false);
        assert_eq!(ledger.completion_reserve("t@1", &request), 365);
        assert_eq!(ledger.completion_reserve("other@1", &request), 256);
        request.sampling.max_tokens = Some(100);
        assert_eq!(ledger.completion_reserve("t@1", &request), 100);
    }

    #[test]
    fn cost_cap_reserves_estimates_and_books_real_cost() {
        let mut prices = PriceTable::empty();
        let price = Price {
            prompt_per_million: 1_000_000.0,
            completion_per_million: 0.0,
        };
        prices.insert("m", price);
        let budget = Budget {
            max_calls: None,
            max_cost_usd: Some(10.0),
        };
        let ledger = Ledger::new(prices, budget);
        // $1 per prompt token: two calls estimated at $4 fit, a third does not.
        let a = ledger.reserve("m", usage(4, 0)).unwrap();
        let b = ledger.reserve("m", usage(4, 0)).unwrap();
        assert!(ledger.reserve("m", usage(4, 0)).is_err());
        ledger.answered(a, "m", "t@1", usage(1, 0), false);
        ledger.answered(b, "m", "t@1", usage(1, 0), false);
        ledger.cached("t@1", 3, usage(30, 3));
        ledger.shared("t@1");
        let c = ledger.reserve("m", usage(8, 0)).unwrap();
        ledger.answered(c, "m", "u@1", usage(8, 0), false);
        let err = ledger.reserve("m", usage(1, 0)).unwrap_err();
        assert!(matches!(
            err,
            JudgeError::BudgetExhausted {
                cap: Cap::CostUsd(_),
                calls: 3,
                ..
            }
        ));
        let report = ledger.report();
        assert_eq!(report.cost_usd(), Some(10.0));
        assert_eq!(report.templates["t@1"].cached_calls, 3);
        assert_eq!(report.templates["t@1"].shared_calls, 1);
        assert_eq!(report.total.calls, 3);
        // An embedding model without a price cannot run under a cost cap: said clearly.
        let err = ledger.reserve("e", usage(1, 0)).unwrap_err();
        assert!(err.to_string().contains("no price"), "{err}");
    }
}
