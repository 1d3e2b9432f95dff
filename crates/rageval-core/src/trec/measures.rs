//! The measure catalogue (a table, in trec_eval's print order), its nicknames, and parsing of
//! `-m` arguments with their parameters into a [`Selection`].
//!
//! Parameters follow trec_eval: `P.5,7,3` (integer cutoffs, sorted; `23.4` reads as 23),
//! `iprec_at_recall..10,.25` (fractions, sorted, printed `%3.2f`), `ndcg.1=3,2=9` (gain per
//! level), `utility.2,-1,0,0`, `relstring.20`. A measure given parameters of the free-form
//! kinds is printed as `name_<parameters as typed>`. Formulas live in `compute.rs` and
//! `gain.rs`, not here.

use super::error::TrecError;

/// Every measure this evaluator knows, in the order trec_eval prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Measure {
    RunId,
    NumQ,
    NumRet,
    NumRel,
    NumRelRet,
    Map,
    GmMap,
    Rprec,
    Bpref,
    RecipRank,
    IprecAtRecall,
    P,
    Relstring,
    Recall,
    InfAp,
    GmBpref,
    RprecMult,
    Utility,
    ElevenPtAvg,
    BinG,
    G,
    Dcg,
    IdealDcg,
    Ndcg,
    NdcgRel,
    Rndcg,
    NdcgCut,
    MapCut,
    RelativeP,
    Success,
    SetP,
    SetRelativeP,
    SetRecall,
    SetMap,
    SetF,
    NumNonrelJudgedRet,
    Rbp,
    RbpResid,
    Unj,
}

/// How a measure reads its parameters, and its defaults.
#[derive(Debug, Clone, Copy)]
enum ParamKind {
    None,
    /// Integer cutoffs, one printed value each (`P_5`).
    Cutoffs(&'static [usize]),
    /// Fractional cutoffs, one printed value each (`iprec_at_recall_0.10`).
    Fractions(&'static [f64]),
    /// A list of numbers for one printed value; the name takes the raw parameter text.
    Numbers(&'static [f64]),
    /// `level=gain` pairs for one printed value; the name takes the raw parameter text.
    Gains,
}

const DOC_CUTOFFS: &[usize] = &[5, 10, 15, 20, 30, 100, 200, 500, 1000];
const RECALL_POINTS: &[f64] = &[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
const R_MULTIPLES: &[f64] = &[0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0];

/// Catalogue row: measure, name on the command line and in output, parameter kind.
const CATALOGUE: &[(Measure, &str, ParamKind)] = &[
    (Measure::RunId, "runid", ParamKind::None),
    (Measure::NumQ, "num_q", ParamKind::None),
    (Measure::NumRet, "num_ret", ParamKind::None),
    (Measure::NumRel, "num_rel", ParamKind::None),
    (Measure::NumRelRet, "num_rel_ret", ParamKind::None),
    (Measure::Map, "map", ParamKind::None),
    (Measure::GmMap, "gm_map", ParamKind::None),
    (Measure::Rprec, "Rprec", ParamKind::None),
    (Measure::Bpref, "bpref", ParamKind::None),
    (Measure::RecipRank, "recip_rank", ParamKind::None),
    (
        Measure::IprecAtRecall,
        "iprec_at_recall",
        ParamKind::Fractions(RECALL_POINTS),
    ),
    (Measure::P, "P", ParamKind::Cutoffs(DOC_CUTOFFS)),
    (Measure::Relstring, "relstring", ParamKind::Numbers(&[10.0])),
    (Measure::Recall, "recall", ParamKind::Cutoffs(DOC_CUTOFFS)),
    (Measure::InfAp, "infAP", ParamKind::None),
    (Measure::GmBpref, "gm_bpref", ParamKind::None),
    (
        Measure::RprecMult,
        "Rprec_mult",
        ParamKind::Fractions(R_MULTIPLES),
    ),
    (
        Measure::Utility,
        "utility",
        ParamKind::Numbers(&[1.0, -1.0, 0.0, 0.0]),
    ),
    (
        Measure::ElevenPtAvg,
        "11pt_avg",
        ParamKind::Numbers(RECALL_POINTS),
    ),
    (Measure::BinG, "binG", ParamKind::None),
    (Measure::G, "G", ParamKind::Gains),
    (Measure::Dcg, "dcg", ParamKind::Gains),
    (Measure::IdealDcg, "ideal_dcg", ParamKind::Gains),
    (Measure::Ndcg, "ndcg", ParamKind::Gains),
    (Measure::NdcgRel, "ndcg_rel", ParamKind::Gains),
    (Measure::Rndcg, "Rndcg", ParamKind::Gains),
    (
        Measure::NdcgCut,
        "ndcg_cut",
        ParamKind::Cutoffs(DOC_CUTOFFS),
    ),
    (Measure::MapCut, "map_cut", ParamKind::Cutoffs(DOC_CUTOFFS)),
    (
        Measure::RelativeP,
        "relative_P",
        ParamKind::Cutoffs(DOC_CUTOFFS),
    ),
    (Measure::Success, "success", ParamKind::Cutoffs(&[1, 5, 10])),
    (Measure::SetP, "set_P", ParamKind::None),
    (Measure::SetRelativeP, "set_relative_P", ParamKind::None),
    (Measure::SetRecall, "set_recall", ParamKind::None),
    (Measure::SetMap, "set_map", ParamKind::None),
    (Measure::SetF, "set_F", ParamKind::Numbers(&[1.0])),
    (
        Measure::NumNonrelJudgedRet,
        "num_nonrel_judged_ret",
        ParamKind::None,
    ),
    (Measure::Rbp, "rbp", ParamKind::Gains),
    (Measure::RbpResid, "rbp_resid", ParamKind::None),
    (Measure::Unj, "unj", ParamKind::Cutoffs(&[5, 10, 20])),
];

const OFFICIAL: &[&str] = &[
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
];

/// trec_eval 10.0's `all_trec` (it has no `dcg`/`ideal_dcg`; those are asked for by name).
const ALL_TREC: &[&str] = &[
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "rbp",
    "rbp_resid",
    "unj",
];

const SET: &[&str] = &[
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
];

const NICKNAMES: &[(&str, &[&str])] =
    &[("official", OFFICIAL), ("all_trec", ALL_TREC), ("set", SET)];

/// Parsed parameters of one selected measure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Params {
    None,
    Cutoffs(Vec<usize>),
    Fractions(Vec<f64>),
    Numbers(Vec<f64>),
    /// `(level, gain)` pairs, plus RBP's persistence `p` when given as `p=…`.
    Gains {
        pairs: Vec<(i64, f64)>,
        persistence: Option<f64>,
    },
}

/// One measure to compute, with its parameters and the names of the values it prints.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Selected {
    pub(crate) measure: Measure,
    pub(crate) params: Params,
    pub(crate) names: Vec<String>,
}

/// The measures to compute, in print order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Selection {
    pub(crate) measures: Vec<Selected>,
}

impl Selection {
    /// Parse `-m` arguments as trec_eval does; an empty list means `official`.
    pub(crate) fn parse(arguments: &[String]) -> Result<Selection, TrecError> {
        let mut marked = vec![false; CATALOGUE.len()];
        let mut raw_params: Vec<Option<String>> = vec![None; CATALOGUE.len()];
        let defaults = [String::from("official")];
        let arguments = if arguments.is_empty() {
            &defaults[..]
        } else {
            arguments
        };
        for argument in arguments {
            let (name, params) = match argument.split_once('.') {
                Some((name, params)) => (name, Some(params)),
                None => (argument.as_str(), None),
            };
            if let Some(params) = params {
                if params.is_empty() {
                    return Err(bad(name, params, "empty parameter list"));
                }
            }
            if let Some((_, members)) = NICKNAMES.iter().find(|(nick, _)| *nick == name) {
                for member in *members {
                    marked[position(member).ok_or_else(|| unknown(member))?] = true;
                }
                continue;
            }
            let slot = position(name).ok_or_else(|| unknown(argument))?;
            marked[slot] = true;
            if let Some(params) = params {
                raw_params[slot] = Some(params.to_owned());
            }
        }
        let mut measures = Vec::new();
        for (slot, &(measure, name, kind)) in CATALOGUE.iter().enumerate() {
            if marked[slot] {
                measures.push(select(measure, name, kind, raw_params[slot].as_deref())?);
            }
        }
        Ok(Selection { measures })
    }
}

fn position(name: &str) -> Option<usize> {
    CATALOGUE.iter().position(|(_, known, _)| *known == name)
}

fn unknown(measure: &str) -> TrecError {
    TrecError::UnknownMeasure {
        measure: measure.to_owned(),
    }
}

fn bad(measure: &str, parameter: &str, reason: &'static str) -> TrecError {
    TrecError::BadParameter {
        measure: measure.to_owned(),
        parameter: parameter.to_owned(),
        reason,
    }
}

fn select(
    measure: Measure,
    name: &str,
    kind: ParamKind,
    raw: Option<&str>,
) -> Result<Selected, TrecError> {
    let (params, names) = match (kind, raw) {
        (ParamKind::None, Some(raw)) => return Err(bad(name, raw, "this measure takes none")),
        (ParamKind::None, None) => (Params::None, vec![name.to_owned()]),
        (ParamKind::Cutoffs(defaults), raw) => {
            let cutoffs = match raw {
                Some(raw) => parse_cutoffs(name, raw)?,
                None => defaults.to_vec(),
            };
            let names = cutoffs.iter().map(|cut| format!("{name}_{cut}")).collect();
            (Params::Cutoffs(cutoffs), names)
        }
        (ParamKind::Fractions(defaults), raw) => {
            let mut fractions = match raw {
                Some(raw) => parse_numbers(name, raw)?,
                None => defaults.to_vec(),
            };
            fractions.sort_by(f64::total_cmp);
            fractions.dedup();
            let names = fractions
                .iter()
                .map(|cut| format!("{name}_{cut:.2}"))
                .collect();
            (Params::Fractions(fractions), names)
        }
        (ParamKind::Numbers(defaults), raw) => {
            let numbers = match raw {
                Some(raw) => parse_numbers(name, raw)?,
                None => defaults.to_vec(),
            };
            if measure == Measure::Utility && numbers.len() != 4 {
                return Err(bad(
                    name,
                    raw.unwrap_or(""),
                    "utility needs exactly 4 coefficients",
                ));
            }
            (Params::Numbers(numbers), vec![suffixed(name, raw)])
        }
        (ParamKind::Gains, raw) => {
            let mut pairs = Vec::new();
            let mut persistence = None;
            for item in raw.unwrap_or("").split(',').filter(|item| !item.is_empty()) {
                let Some((level, gain)) = item.split_once('=') else {
                    return Err(bad(name, item, "expected level=gain"));
                };
                let gain: f64 = gain
                    .parse()
                    .map_err(|_| bad(name, item, "gain is not a number"))?;
                if measure == Measure::Rbp && level == "p" {
                    persistence = Some(gain);
                    continue;
                }
                let level: i64 = level
                    .parse()
                    .map_err(|_| bad(name, item, "level is not an integer"))?;
                pairs.push((level, gain));
            }
            (
                Params::Gains { pairs, persistence },
                vec![suffixed(name, raw)],
            )
        }
    };
    Ok(Selected {
        measure,
        params,
        names,
    })
}

fn suffixed(name: &str, raw: Option<&str>) -> String {
    match raw {
        Some(raw) => format!("{name}_{raw}"),
        None => name.to_owned(),
    }
}

fn parse_numbers(name: &str, raw: &str) -> Result<Vec<f64>, TrecError> {
    raw.split(',')
        .map(|item| {
            item.parse::<f64>()
                .map_err(|_| bad(name, item, "not a number"))
        })
        .collect()
}

/// Integer cutoffs the way C's `atol` reads them (`23.4` is 23), sorted and positive.
fn parse_cutoffs(name: &str, raw: &str) -> Result<Vec<usize>, TrecError> {
    let mut cutoffs = Vec::new();
    for item in raw.split(',') {
        let digits = item.split('.').next().unwrap_or("");
        let cutoff: usize = digits
            .parse()
            .map_err(|_| bad(name, item, "not a positive integer"))?;
        if cutoff == 0 {
            return Err(bad(name, item, "cutoffs must be positive"));
        }
        cutoffs.push(cutoff);
    }
    cutoffs.sort_unstable();
    cutoffs.dedup();
    Ok(cutoffs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(arguments: &[&str]) -> Vec<String> {
        let arguments: Vec<String> = arguments.iter().map(|a| a.to_string()).collect();
        Selection::parse(&arguments)
            .unwrap()
            .measures
            .into_iter()
            .flat_map(|selected| selected.names)
            .collect()
    }

    #[test]
    fn parameters_are_sorted_and_named_like_trec_eval() {
        assert_eq!(names(&["P.5,7,3"]), ["P_3", "P_5", "P_7"]);
        assert_eq!(
            names(&["ndcg_cut.10,20,23.4"]),
            ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
        );
        assert_eq!(
            names(&["Rprec_mult.5.0,0.2,0.35"]),
            ["Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"]
        );
        assert_eq!(names(&["ndcg.1=3,2=9,4=4.5"]), ["ndcg_1=3,2=9,4=4.5"]);
        assert_eq!(names(&["11pt_avg..25,.5,.75"]), ["11pt_avg_.25,.5,.75"]);
    }

    #[test]
    fn output_follows_catalogue_order_not_argument_order() {
        assert_eq!(
            names(&["recip_rank", "map", "P.1"]),
            ["map", "recip_rank", "P_1"]
        );
        assert_eq!(names(&[]).len(), 10 + 11 + 9);
    }

    #[test]
    fn bad_arguments_are_errors() {
        let error = Selection::parse(&["mapp".to_owned()]).unwrap_err();
        assert_eq!(error.to_string(), "unknown measure `mapp`");
        assert!(Selection::parse(&["P.x".to_owned()]).is_err());
        assert!(Selection::parse(&["map.5".to_owned()]).is_err());
        assert!(Selection::parse(&["utility.1,2".to_owned()]).is_err());
    }
}
