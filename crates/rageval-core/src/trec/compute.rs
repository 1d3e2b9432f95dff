//! Per-topic formulas for the binary-relevance and set measures (precision, recall, AP,
//! bpref, infAP, interpolated precision, …), with trec_eval's conventions: a measure whose
//! denominator is zero is 0, ranks count from 1, and "relevant" means `rel >= -l`.
//!
//! Gain-based measures (nDCG and kin, RBP) are in `gain.rs`. Averaging over topics and
//! printing are in `report.rs`; nothing here looks at more than one topic.

use super::gain;
use super::judge::{JudgedQuery, NONPOOL, UNJUDGED};
use super::measures::{Measure, Params, Selected};

/// Floor applied before taking logs for the geometric means (trec_eval's `MIN_GEO_MEAN`).
pub(crate) const MIN_GEO_MEAN: f64 = 0.00001;
/// Smoothing constant of infAP (trec_eval's `INFAP_EPSILON`).
const INFAP_EPSILON: f64 = 0.00001;

/// Compute one selected measure for one topic, appending one value per printed name.
/// `relstring` receives the text of the `relstring` measure (its numeric slot stays 0).
pub(crate) fn compute(
    selected: &Selected,
    q: &JudgedQuery,
    out: &mut Vec<f64>,
    relstring: &mut Option<String>,
) {
    let num_ret = q.num_ret() as f64;
    let num_rel = q.num_rel as f64;
    let num_rel_ret = q.num_rel_ret as f64;
    match (selected.measure, &selected.params) {
        (Measure::RunId | Measure::NumQ, _) => out.push(0.0),
        (Measure::NumRet, _) => out.push(num_ret),
        (Measure::NumRel, _) => out.push(num_rel),
        (Measure::NumRelRet, _) => out.push(num_rel_ret),
        (Measure::Map | Measure::GmMap, _) => out.push(average_precision(q, q.num_ret())),
        (Measure::Rprec, _) => out.push(ratio(rel_in_top(q, q.num_rel as usize), num_rel)),
        (Measure::Bpref | Measure::GmBpref, _) => out.push(bpref(q)),
        (Measure::RecipRank, _) => out.push(
            q.rels
                .iter()
                .position(|&rel| q.is_rel(rel))
                .map_or(0.0, |rank| 1.0 / (rank + 1) as f64),
        ),
        (Measure::IprecAtRecall, Params::Fractions(fractions)) => {
            let cutoffs: Vec<i64> = fractions
                .iter()
                .map(|f| (f * num_rel).round() as i64)
                .collect();
            let start = out.len();
            out.resize(start + cutoffs.len(), 0.0);
            let values = &mut out[start..];
            interpolated_precision(q, &cutoffs, |index, value| values[index] = value);
        }
        (Measure::P, Params::Cutoffs(cuts)) => {
            out.extend(cuts.iter().map(|&k| rel_in_top(q, k) / k as f64));
        }
        (Measure::Relstring, Params::Numbers(length)) => {
            let length = length.first().map_or(0, |&l| l.max(0.0) as usize);
            *relstring = Some(
                q.rels
                    .iter()
                    .take(length)
                    .map(|&rel| relstring_char(rel))
                    .collect(),
            );
            out.push(0.0);
        }
        (Measure::Recall, Params::Cutoffs(cuts)) => {
            out.extend(cuts.iter().map(|&k| ratio(rel_in_top(q, k), num_rel)));
        }
        (Measure::InfAp, _) => out.push(inferred_ap(q)),
        (Measure::RprecMult, Params::Fractions(fractions)) => {
            // trec_eval 10 still rounds these cutoffs with `+ 0.9` and truncation.
            let cutoffs: Vec<i64> = fractions
                .iter()
                .map(|f| (f * num_rel + 0.9) as i64)
                .collect();
            precision_at_r_multiples(q, &cutoffs, out);
        }
        (Measure::Utility, Params::Numbers(c)) if c.len() == 4 => out.push(
            // The collection size (`-N`) is not known, so the last cell counts from zero.
            c[0] * num_rel_ret
                + c[1] * (num_ret - num_rel_ret)
                + c[2] * (num_rel - num_rel_ret)
                + c[3] * (num_rel_ret - num_ret - num_rel),
        ),
        (Measure::ElevenPtAvg, Params::Numbers(fractions)) => {
            let mut sorted = fractions.clone();
            sorted.sort_by(f64::total_cmp);
            let cutoffs: Vec<i64> = sorted
                .iter()
                .map(|f| (f * num_rel).round() as i64)
                .collect();
            let mut sum = 0.0;
            interpolated_precision(q, &cutoffs, |_, value| sum += value);
            out.push(if sorted.is_empty() {
                0.0
            } else {
                sum / sorted.len() as f64
            });
        }
        (Measure::BinG, _) => out.push(binary_g(q)),
        (Measure::NdcgCut, Params::Cutoffs(cuts)) => gain::ndcg_cut(q, cuts, out),
        (Measure::MapCut, Params::Cutoffs(cuts)) => {
            out.extend(cuts.iter().map(|&k| average_precision(q, k)));
        }
        (Measure::RelativeP, Params::Cutoffs(cuts)) => {
            out.extend(
                cuts.iter()
                    .map(|&k| ratio(rel_in_top(q, k), (k as f64).min(num_rel))),
            );
        }
        (Measure::Success, Params::Cutoffs(cuts)) => {
            out.extend(
                cuts.iter()
                    .map(|&k| f64::from(u8::from(rel_in_top(q, k) > 0.0))),
            );
        }
        (Measure::SetP, _) => out.push(ratio(num_rel_ret, num_ret)),
        (Measure::SetRelativeP, _) => out.push(ratio(num_rel_ret, num_ret.min(num_rel))),
        (Measure::SetRecall, _) => out.push(ratio(num_rel_ret, num_rel)),
        (Measure::SetMap, _) => out.push(ratio(num_rel_ret * num_rel_ret, num_ret * num_rel)),
        (Measure::SetF, Params::Numbers(beta)) => {
            let beta = beta.first().copied().unwrap_or(1.0);
            let precision = ratio(num_rel_ret, num_ret);
            let recall = ratio(num_rel_ret, num_rel);
            out.push(ratio(
                (beta + 1.0) * precision * recall,
                beta * precision + recall,
            ));
        }
        (Measure::NumNonrelJudgedRet, _) => out.push(
            q.rels
                .iter()
                .filter(|&&rel| rel >= 0 && !q.is_rel(rel))
                .count() as f64,
        ),
        (Measure::RbpResid, _) => out.push(gain::rbp_residual(q)),
        (Measure::Unj, Params::Cutoffs(cuts)) => {
            out.extend(cuts.iter().map(|&k| {
                let unjudged = q
                    .rels
                    .iter()
                    .take(k)
                    .filter(|&&rel| rel == NONPOOL || rel == UNJUDGED);
                unjudged.count() as f64 / k as f64
            }));
        }
        (
            Measure::G
            | Measure::Dcg
            | Measure::IdealDcg
            | Measure::Ndcg
            | Measure::NdcgRel
            | Measure::Rndcg
            | Measure::Rbp,
            _,
        ) => {
            out.push(gain::gain_measure(selected, q));
        }
        // Every (measure, parameter kind) pair built by `measures.rs` is matched above; a
        // mismatch would be a bug there, and still prints zeros rather than panicking.
        _ => out.extend(selected.names.iter().map(|_| 0.0)),
    }
}

/// `numerator / denominator`, or 0 when the denominator is 0 (trec_eval leaves the value at
/// its initial zero in that case).
fn ratio(numerator: f64, denominator: f64) -> f64 {
    if denominator > 0.0 {
        numerator / denominator
    } else {
        0.0
    }
}

/// Relevant documents among the first `k` retrieved.
fn rel_in_top(q: &JudgedQuery, k: usize) -> f64 {
    q.rels.iter().take(k).filter(|&&rel| q.is_rel(rel)).count() as f64
}

/// Average precision over the first `cut` ranks, normalised by all relevant documents.
fn average_precision(q: &JudgedQuery, cut: usize) -> f64 {
    let mut found = 0_u64;
    let mut sum = 0.0;
    for (rank, &rel) in q.rels.iter().take(cut).enumerate() {
        if q.is_rel(rel) {
            found += 1;
            sum += found as f64 / (rank + 1) as f64;
        }
    }
    ratio(sum, q.num_rel as f64)
}

fn bpref(q: &JudgedQuery) -> f64 {
    let num_nonrel: u64 = q
        .level_counts
        .iter()
        .enumerate()
        .filter(|(level, _)| (*level as i64) < q.rel_level)
        .map(|(_, count)| count)
        .sum();
    let denominator = num_nonrel.min(q.num_rel) as f64;
    let mut nonrel_so_far = 0_u64;
    let mut sum = 0.0;
    // Only judged documents take part; unjudged and unpooled ones are skipped.
    for &rel in q.rels.iter().filter(|&&rel| rel >= 0) {
        if q.is_rel(rel) {
            sum += if nonrel_so_far > 0 {
                1.0 - nonrel_so_far.min(q.num_rel) as f64 / denominator
            } else {
                1.0
            };
        } else {
            nonrel_so_far += 1;
        }
    }
    ratio(sum, q.num_rel as f64)
}

/// Inferred AP (Yilmaz & Aslam, CIKM 2006) as trec_eval computes it.
fn inferred_ap(q: &JudgedQuery) -> f64 {
    let (mut rel_so_far, mut nonrel_so_far, mut unjudged_so_far) = (0.0, 0.0, 0.0);
    let mut sum = 0.0;
    for (index, &rel) in q.rels.iter().enumerate() {
        match rel {
            NONPOOL => continue,
            UNJUDGED => unjudged_so_far += 1.0,
            _ if !q.is_rel(rel) => nonrel_so_far += 1.0,
            _ => {
                rel_so_far += 1.0;
                if index == 0 {
                    sum += 1.0;
                } else {
                    let above = index as f64;
                    let judged_above = rel_so_far - 1.0 + nonrel_so_far;
                    sum += 1.0 / (above + 1.0)
                        + (above / (above + 1.0))
                            * ((judged_above + unjudged_so_far) / above)
                            * ((rel_so_far - 1.0 + INFAP_EPSILON)
                                / (judged_above + 2.0 * INFAP_EPSILON));
                }
            }
        }
    }
    ratio(sum, q.num_rel as f64)
}

/// Interpolated precision (max precision at any rank at or below) at each cutoff, where
/// cutoffs count relevant documents and are ascending. Calls `emit(index, value)` once per
/// cutoff, from the last to the first.
fn interpolated_precision(q: &JudgedQuery, cutoffs: &[i64], mut emit: impl FnMut(usize, f64)) {
    let mut pending = cutoffs.len();
    // Cutoffs beyond what was retrieved are never reached: their precision is 0.
    while pending > 0 && cutoffs[pending - 1] > q.num_rel_ret as i64 {
        pending -= 1;
        emit(pending, 0.0);
    }
    let mut best = ratio(q.num_rel_ret as f64, q.num_ret() as f64);
    let mut rel_so_far = q.num_rel_ret as i64;
    for rank in (1..=q.num_ret()).rev() {
        if rel_so_far <= 0 {
            break;
        }
        best = best.max(rel_so_far as f64 / rank as f64);
        if q.is_rel(q.rels[rank - 1]) {
            while pending > 0 && rel_so_far == cutoffs[pending - 1] {
                pending -= 1;
                emit(pending, best);
            }
            rel_so_far -= 1;
        }
    }
    while pending > 0 {
        pending -= 1;
        emit(pending, best);
    }
}

/// Precision after `cutoff` documents, for cutoffs that are multiples of R (ascending).
fn precision_at_r_multiples(q: &JudgedQuery, cutoffs: &[i64], out: &mut Vec<f64>) {
    let start = out.len();
    out.extend(cutoffs.iter().map(|_| 0.0));
    let values = &mut out[start..];
    let num_ret = q.num_ret() as i64;
    let mut pending = cutoffs.len();
    while pending > 0 && cutoffs[pending - 1] > num_ret {
        pending -= 1;
        values[pending] = q.num_rel_ret as f64 / cutoffs[pending] as f64;
    }
    let mut rel_so_far = q.num_rel_ret as i64;
    for rank in (1..=num_ret).rev() {
        if rel_so_far <= 0 {
            break;
        }
        while pending > 0 && rank == cutoffs[pending - 1] {
            pending -= 1;
            values[pending] = rel_so_far as f64 / rank as f64;
        }
        if q.is_rel(q.rels[rank as usize - 1]) {
            rel_so_far -= 1;
        }
    }
}

/// Binary G: each relevant document is worth `1 / log2(2 + nonrelevant documents above it)`.
fn binary_g(q: &JudgedQuery) -> f64 {
    let mut found = 0_usize;
    let mut sum = 0.0;
    for (index, &rel) in q.rels.iter().enumerate() {
        if q.is_rel(rel) {
            found += 1;
            sum += 1.0 / ((3 + index - found) as f64).log2();
        }
    }
    if found > 0 {
        ratio(sum, q.num_rel as f64)
    } else {
        0.0
    }
}

fn relstring_char(rel: i64) -> char {
    match rel {
        10.. => '>',
        0..=9 => char::from(b'0' + rel as u8),
        NONPOOL => '-',
        UNJUDGED => '.',
        _ => '<',
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::judge::count_levels;
    use crate::trec::measures::Selection;

    /// Values of one `-m` argument for a ranking `rels` over judgments `judged`.
    fn values(argument: &str, rels: Vec<i64>, judged: &[i64], rel_level: i64) -> Vec<f64> {
        let selection = Selection::parse(&[argument.to_owned()]).unwrap();
        let q = JudgedQuery::new(rels, &count_levels(judged.iter().copied()), rel_level);
        let mut out = Vec::new();
        compute(&selection.measures[0], &q, &mut out, &mut None);
        out
    }

    #[test]
    fn average_precision_counts_unretrieved_relevant_documents() {
        // Relevant at ranks 1 and 3, one relevant never retrieved: (1 + 2/3) / 3.
        let map = values("map", vec![1, 0, 1, NONPOOL], &[1, 0, 1, 1], 1);
        assert!((map[0] - (1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-15);
        assert_eq!(
            values("map_cut.1", vec![1, 0, 1], &[1, 0, 1, 1], 1),
            [1.0 / 3.0]
        );
    }

    #[test]
    fn bpref_skips_unjudged_documents() {
        // Unjudged documents above the relevant one do not count against it.
        assert_eq!(
            values("bpref", vec![NONPOOL, UNJUDGED, 1], &[1, 0], 1),
            [1.0]
        );
        // One judged nonrelevant above: 1 - min(1, R) / min(N, R).
        assert_eq!(values("bpref", vec![0, 1], &[1, 0], 1), [0.0]);
    }

    #[test]
    fn interpolated_precision_takes_the_best_precision_below() {
        // Relevant at ranks 2 and 3 of 3 (R = 2): precision 1/2 then 2/3.
        let points = values("iprec_at_recall.0,.5,1", vec![0, 1, 1], &[0, 1, 1], 1);
        assert_eq!(points, [2.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0]);
        let multiples = values("Rprec_mult.0.5,1,2", vec![0, 1, 1], &[0, 1, 1], 1);
        assert_eq!(multiples, [0.0, 0.5, 0.5]);
    }

    #[test]
    fn relevance_level_changes_binary_measures() {
        assert_eq!(values("P.2", vec![1, 2], &[1, 2], 2), [0.5]);
        assert_eq!(values("recip_rank", vec![1, 2], &[1, 2], 2), [0.5]);
        assert_eq!(
            values("num_nonrel_judged_ret", vec![1, 2, NONPOOL], &[1, 2], 2),
            [1.0]
        );
    }

    #[test]
    fn relstring_marks_unpooled_and_unjudged() {
        let selection = Selection::parse(&["relstring.4".to_owned()]).unwrap();
        let q = JudgedQuery::new(vec![12, 3, NONPOOL, UNJUDGED, 1], &[3, 1], 1);
        let mut text = None;
        compute(&selection.measures[0], &q, &mut Vec::new(), &mut text);
        assert_eq!(text.as_deref(), Some(">3-."));
    }
}
