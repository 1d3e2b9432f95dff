//! Gain-based measures: nDCG (whole list and at cutoffs), DCG, ideal DCG, ndcg_rel, Rndcg,
//! G and rank-biased precision, as trec_eval defines them.
//!
//! The gain of a document is its relevance level (linear, not `2^rel - 1`) unless `-m
//! ndcg.level=gain,…` overrides it; unjudged and unpooled documents gain 0. The discount is
//! `log2(rank + 1)`. The ideal ranking is built from *all* judged documents of the topic,
//! highest gain first, and stops at the first gain that is not positive. The `-l` threshold
//! does not change gains. Binary measures are in `compute.rs`.

use super::judge::JudgedQuery;
use super::measures::{Measure, Params, Selected};

/// Persistence of RBP when none is given (trec_eval's default).
const DEFAULT_PERSISTENCE: f64 = 0.9;

/// One relevance level with its gain and how many judged documents sit at it.
#[derive(Debug, Clone, Copy)]
struct Level {
    level: i64,
    gain: f64,
    count: u64,
}

/// Gains per level: every level from 0 to the highest judged one (default gain = level),
/// plus each level named on the command line; sorted by gain, highest first.
fn gain_table(q: &JudgedQuery, pairs: &[(i64, f64)]) -> Vec<Level> {
    let mut table: Vec<Level> = pairs
        .iter()
        .map(|&(level, gain)| Level {
            level,
            gain,
            count: 0,
        })
        .collect();
    for (level, &count) in q.level_counts.iter().enumerate() {
        let level = level as i64;
        match table.iter_mut().find(|entry| entry.level == level) {
            Some(entry) => entry.count = count,
            None => table.push(Level {
                level,
                gain: level as f64,
                count,
            }),
        }
    }
    table.sort_by(|a, b| b.gain.total_cmp(&a.gain));
    table
}

fn gain_of(table: &[Level], rel: i64) -> f64 {
    table
        .iter()
        .find(|entry| entry.level == rel)
        .map_or(0.0, |entry| entry.gain)
}

/// Walks the ideal ranking one position at a time, skipping levels with no documents.
/// Before the first step it reports the top level's gain, as trec_eval's loops expect.
struct IdealCursor<'a> {
    table: &'a [Level],
    level: usize,
    used: u64,
    gain: f64,
}

impl<'a> IdealCursor<'a> {
    fn new(table: &'a [Level]) -> Self {
        let gain = table.first().map_or(0.0, |entry| entry.gain);
        Self {
            table,
            level: 0,
            used: 0,
            gain,
        }
    }

    /// Move to the next ideal position and return its gain (0 once every level is used).
    fn step(&mut self) -> f64 {
        self.used += 1;
        while self.level < self.table.len() && self.used > self.table[self.level].count {
            self.used = 1;
            self.level += 1;
        }
        self.gain = self.table.get(self.level).map_or(0.0, |entry| entry.gain);
        self.gain
    }
}

fn discount(index: usize) -> f64 {
    ((index + 2) as f64).log2()
}

/// The ideal gains with positive value, in order.
fn ideal_gains(table: &[Level]) -> Vec<f64> {
    let mut cursor = IdealCursor::new(table);
    let mut gains = Vec::new();
    while cursor.gain > 0.0 {
        let gain = cursor.step();
        if gain > 0.0 {
            gains.push(gain);
        }
    }
    gains
}

/// DCG of a ranked list of gains.
fn dcg(gains: impl Iterator<Item = f64>) -> f64 {
    gains
        .enumerate()
        .filter(|(_, gain)| *gain != 0.0)
        .map(|(index, gain)| gain / discount(index))
        // `Sum for f64` starts from -0.0, which would print as "-0.0000".
        .fold(0.0, |total, term| total + term)
}

/// One single-valued gain measure for one topic.
pub(crate) fn gain_measure(selected: &Selected, q: &JudgedQuery) -> f64 {
    let (pairs, persistence) = match &selected.params {
        Params::Gains { pairs, persistence } => (pairs.as_slice(), *persistence),
        _ => (&[][..], None),
    };
    let table = gain_table(q, pairs);
    match selected.measure {
        Measure::Dcg => dcg(q.rels.iter().map(|&rel| gain_of(&table, rel))),
        Measure::IdealDcg => dcg(ideal_gains(&table).into_iter()),
        Measure::Ndcg => {
            let ideal = dcg(ideal_gains(&table).into_iter());
            let actual = dcg(q.rels.iter().map(|&rel| gain_of(&table, rel)));
            if ideal > 0.0 { actual / ideal } else { 0.0 }
        }
        Measure::NdcgRel => ndcg_rel(q, &table),
        Measure::Rndcg => r_ndcg(q, &table),
        Measure::G => normalized_g(q, &table),
        Measure::Rbp => rbp(q, table, persistence.unwrap_or(DEFAULT_PERSISTENCE)),
        _ => 0.0,
    }
}

/// nDCG at each cutoff, with default gains (the relevance levels).
pub(crate) fn ndcg_cut(q: &JudgedQuery, cuts: &[usize], out: &mut Vec<f64>) {
    let table = gain_table(q, &[]);
    let ideal = ideal_gains(&table);
    for &k in cuts {
        let ideal_dcg = dcg(ideal.iter().take(k).copied());
        let actual = dcg(q
            .rels
            .iter()
            .take(k)
            .map(|&rel| if rel > 0 { rel as f64 } else { 0.0 }));
        out.push(if ideal_dcg > 0.0 {
            actual / ideal_dcg
        } else {
            0.0
        });
    }
}

/// nDCG averaged over the relevant (positive-gain) documents; an unretrieved one counts with
/// the nDCG at the end of the list.
fn ndcg_rel(q: &JudgedQuery, table: &[Level]) -> f64 {
    let ideal = ideal_gains(table);
    let (mut actual, mut ideal_dcg, mut sum, mut found) = (0.0, 0.0, 0.0, 0_usize);
    for (index, &rel) in q.rels.iter().enumerate() {
        let gain = gain_of(table, rel);
        if gain != 0.0 {
            actual += gain / discount(index);
        }
        if let Some(ideal_gain) = ideal.get(index) {
            ideal_dcg += ideal_gain / discount(index);
        }
        if gain > 0.0 {
            sum += actual / ideal_dcg;
            found += 1;
        }
    }
    for (index, ideal_gain) in ideal.iter().enumerate().skip(q.num_ret()) {
        ideal_dcg += ideal_gain / discount(index);
    }
    if ideal.len() > found && ideal_dcg > 0.0 {
        sum += (ideal.len() - found) as f64 * actual / ideal_dcg;
    }
    if sum > 0.0 {
        sum / ideal.len() as f64
    } else {
        0.0
    }
}

/// nDCG averaged at the points where the ideal gain changes level (plus the end of the list
/// when it comes first).
fn r_ndcg(q: &JudgedQuery, table: &[Level]) -> f64 {
    if q.num_rel == 0 {
        return 0.0;
    }
    let mut cursor = IdealCursor::new(table);
    let mut previous = cursor.gain;
    let (mut actual, mut ideal_dcg, mut sum, mut points) = (0.0, 0.0, 0.0, 0_u32);
    let mut record = |actual: f64, ideal_dcg: f64| {
        if ideal_dcg > 0.0 {
            sum += actual / ideal_dcg;
            points += 1;
        }
    };
    let mut index = 0;
    while index < q.num_ret() && cursor.gain > 0.0 {
        let gain = gain_of(table, q.rels[index]);
        let ideal_gain = cursor.step();
        if ideal_gain != previous {
            record(actual, ideal_dcg);
            previous = ideal_gain;
        }
        if gain != 0.0 {
            actual += gain / discount(index);
        }
        if ideal_gain > 0.0 {
            ideal_dcg += ideal_gain / discount(index);
        }
        index += 1;
    }
    if index < q.num_ret() {
        for (rest, &rel) in q.rels.iter().enumerate().skip(index) {
            let gain = gain_of(table, rel);
            if gain != 0.0 {
                actual += gain / discount(rest);
            }
        }
        record(actual, ideal_dcg);
    }
    while cursor.gain > 0.0 {
        let ideal_gain = cursor.step();
        if ideal_gain != previous {
            record(actual, ideal_dcg);
            previous = ideal_gain;
        }
        if ideal_gain > 0.0 {
            ideal_dcg += ideal_gain / discount(index);
        }
        index += 1;
    }
    if points > 0 {
        sum / f64::from(points)
    } else {
        0.0
    }
}

/// Buckley's experimental G: a document's gain over `log2(2 + ideal so far - actual so far)`.
fn normalized_g(q: &JudgedQuery, table: &[Level]) -> f64 {
    const MIN_COST: f64 = 1.0;
    let mut cursor = IdealCursor::new(table);
    let (mut actual, mut ideal, mut cost, mut g) = (0.0, 0.0, 0.0, 0.0);
    let mut index = 0;
    while index < q.num_ret() && cursor.gain > 0.0 {
        let gain = gain_of(table, q.rels[index]);
        actual += gain;
        let ideal_gain = cursor.step();
        if ideal_gain > 0.0 {
            ideal += ideal_gain;
        }
        cost += ideal_gain.max(MIN_COST);
        if gain != 0.0 {
            g += gain / (2.0 + cost - actual).log2();
        }
        index += 1;
    }
    for &rel in q.rels.iter().skip(index) {
        let gain = gain_of(table, rel);
        actual += gain;
        cost += MIN_COST;
        if gain != 0.0 {
            g += gain / (2.0 + cost - actual).log2();
        }
    }
    while cursor.gain > 0.0 {
        let ideal_gain = cursor.step();
        if ideal_gain > 0.0 {
            ideal += ideal_gain;
        }
    }
    if ideal > 0.0 { g / ideal } else { 0.0 }
}

/// Rank-biased precision (Moffat & Zobel 2008) with gains scaled into [0, 1] when any lies
/// outside. trec_eval's bounds start from stale memory; we start them at 0, which is what
/// its output on the fixtures shows.
fn rbp(q: &JudgedQuery, mut table: Vec<Level>, persistence: f64) -> f64 {
    let low = table.iter().map(|entry| entry.gain).fold(0.0, f64::min);
    let high = table.iter().map(|entry| entry.gain).fold(0.0, f64::max);
    if low < 0.0 || high > 1.0 {
        for entry in &mut table {
            entry.gain = (entry.gain - low) / (high - low);
        }
    }
    let mut weight = 1.0;
    let mut sum = 0.0;
    for &rel in &q.rels {
        let gain = gain_of(&table, rel);
        if gain != 0.0 {
            sum += gain * weight;
        }
        weight *= persistence;
    }
    (1.0 - persistence) * sum
}

/// trec_eval's `rbp_resid`: the RBP mass of unjudged documents plus the tail beyond the list.
pub(crate) fn rbp_residual(q: &JudgedQuery) -> f64 {
    let persistence = DEFAULT_PERSISTENCE;
    let mut weight = 1.0;
    let mut sum = 0.0;
    let mut unjudged = 0;
    for &rel in &q.rels {
        if rel < 0 {
            unjudged += 1;
            sum += weight;
        }
        weight *= persistence;
    }
    if unjudged > 0 {
        weight + (1.0 - persistence) * sum
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::judge::{NONPOOL, count_levels};
    use crate::trec::measures::Selection;

    fn measure(argument: &str, rels: Vec<i64>, judged: &[i64]) -> f64 {
        let selection = Selection::parse(&[argument.to_owned()]).unwrap();
        let q = JudgedQuery::new(rels, &count_levels(judged.iter().copied()), 1);
        gain_measure(&selection.measures[0], &q)
    }

    #[test]
    fn ndcg_uses_linear_gains_and_all_judged_documents() {
        // Ranked 1, 2, 0, unpooled; judged 1, 0, 2, 1 (one relevant never retrieved).
        let value = measure("ndcg", vec![1, 2, 0, NONPOOL], &[1, 0, 2, 1]);
        let actual = 1.0 + 2.0 / 3f64.log2();
        let ideal = 2.0 + 1.0 / 3f64.log2() + 1.0 / 2.0;
        assert!((value - actual / ideal).abs() < 1e-12);
    }

    #[test]
    fn custom_gains_replace_levels() {
        let default = measure("ndcg", vec![0, 1], &[0, 1]);
        let custom = measure("ndcg.1=3", vec![0, 1], &[0, 1]);
        assert!((default - custom).abs() < 1e-12);
        let with_zero = measure("ndcg.0=1", vec![0, 1], &[0, 1]);
        assert!((with_zero - 1.0).abs() < 1e-12);
    }

    #[test]
    fn ndcg_cut_truncates_both_rankings() {
        let q = JudgedQuery::new(vec![1, 2, 0], &count_levels([1, 2, 0, 1].into_iter()), 1);
        let mut out = Vec::new();
        ndcg_cut(&q, &[2], &mut out);
        let expected = (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2());
        assert!((out[0] - expected).abs() < 1e-12);
    }
}
