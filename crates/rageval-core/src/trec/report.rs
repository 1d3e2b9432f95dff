//! The result of an evaluation and its trec_eval text form.
//!
//! Lines are `name<TAB>qid|all<TAB>value`, the name left-aligned in 22 columns, values with 4
//! decimals, counts as integers; per-topic lines (with `-q`) come first, topic by topic, then
//! the `all` summary. `runid`, `num_q` and the geometric means print only in the summary,
//! `relstring` only per topic. This file formats; it computes no measure.

use std::io::{self, Write};

/// How a printed value is aggregated and formatted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnKind {
    /// The run id, summary only.
    RunId,
    /// Number of topics evaluated, summary only.
    NumQ,
    /// An integer count, summed over topics.
    Count,
    /// A real value, averaged over topics.
    Mean,
    /// A real value, geometric mean over topics after flooring; summary only.
    GeoMean,
    /// Text (`relstring`), per topic only.
    Text,
}

/// One printed measure value (a measure with cutoffs has one column per cutoff).
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub(crate) name: String,
    pub(crate) kind: ColumnKind,
}

/// One topic's values, aligned with the report's columns.
#[derive(Debug, Clone)]
pub(crate) struct QueryRow {
    pub(crate) qid: String,
    pub(crate) values: Vec<f64>,
    pub(crate) relstring: Option<String>,
}

/// Per-topic and summary values of a trec_eval-style evaluation.
#[derive(Debug, Clone)]
pub struct TrecReport {
    pub(crate) run_id: String,
    pub(crate) per_query: bool,
    pub(crate) columns: Vec<Column>,
    pub(crate) queries: Vec<QueryRow>,
    pub(crate) summary: Vec<f64>,
}

impl TrecReport {
    /// Write the report exactly as trec_eval prints it (per-topic lines only if the options
    /// asked for them).
    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        if self.per_query {
            for query in &self.queries {
                for (column, value) in self.columns.iter().zip(&query.values) {
                    match column.kind {
                        ColumnKind::RunId | ColumnKind::NumQ | ColumnKind::GeoMean => {}
                        ColumnKind::Count => line(out, &column.name, &query.qid, *value as i64)?,
                        ColumnKind::Mean => line(out, &column.name, &query.qid, Fixed(*value))?,
                        ColumnKind::Text => {
                            let text = query.relstring.as_deref().unwrap_or("");
                            line(out, &column.name, &query.qid, format_args!("'{text}'"))?;
                        }
                    }
                }
            }
        }
        for (column, value) in self.columns.iter().zip(&self.summary) {
            match column.kind {
                ColumnKind::RunId => line(out, &column.name, "all", &self.run_id)?,
                ColumnKind::NumQ | ColumnKind::Count => {
                    line(out, &column.name, "all", *value as i64)?
                }
                ColumnKind::Mean | ColumnKind::GeoMean => {
                    line(out, &column.name, "all", Fixed(*value))?
                }
                ColumnKind::Text => {}
            }
        }
        Ok(())
    }

    /// The summary (`all`) value of a printed measure name such as `map`, `P_10` or
    /// `ndcg_cut_10`; `None` for unknown names, `runid` and `relstring`.
    pub fn summary(&self, measure: &str) -> Option<f64> {
        let index = self.column(measure)?;
        match self.columns[index].kind {
            ColumnKind::RunId | ColumnKind::Text => None,
            _ => Some(self.summary[index]),
        }
    }

    /// A topic's full-precision value of a printed measure name; `None` for unknown topics or
    /// names and for measures trec_eval prints only in the summary.
    pub fn query_value(&self, qid: &str, measure: &str) -> Option<f64> {
        let index = self.column(measure)?;
        match self.columns[index].kind {
            ColumnKind::Count | ColumnKind::Mean => {}
            _ => return None,
        }
        let query = self.queries.iter().find(|query| query.qid == qid)?;
        query.values.get(index).copied()
    }

    /// The run id printed as `runid`.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Topics evaluated, in output order.
    pub fn query_ids(&self) -> impl Iterator<Item = &str> {
        self.queries.iter().map(|query| query.qid.as_str())
    }

    /// Printed measure names, in output order.
    pub fn measure_names(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|column| column.name.as_str())
    }

    /// Every per-topic and summary value at full precision, as JSON (text measures such as
    /// `runid` left out): `{"run_id", "queries": {qid: {measure: value}}, "summary": {…}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let names: Vec<&str> = self.measure_names().collect();
        let values_of =
            |lookup: &dyn Fn(&str) -> Option<f64>| -> serde_json::Map<String, serde_json::Value> {
                names
                    .iter()
                    .filter_map(|name| lookup(name).map(|value| ((*name).to_owned(), value.into())))
                    .collect()
            };
        let queries: serde_json::Map<String, serde_json::Value> = self
            .query_ids()
            .map(|qid| {
                (
                    qid.to_owned(),
                    values_of(&|name| self.query_value(qid, name)).into(),
                )
            })
            .collect();
        serde_json::json!({
            "run_id": self.run_id(),
            "queries": queries,
            "summary": values_of(&|name| self.summary(name)),
        })
    }

    fn column(&self, measure: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|column| column.name == measure)
    }
}

/// A value printed like C's `%6.4f`.
struct Fixed(f64);

impl std::fmt::Display for Fixed {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{:6.4}", self.0)
    }
}

fn line(
    out: &mut impl Write,
    name: &str,
    qid: &str,
    value: impl std::fmt::Display,
) -> io::Result<()> {
    writeln!(out, "{name:<22}\t{qid}\t{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_matches_c_printf() {
        assert_eq!(Fixed(0.5).to_string(), "0.5000");
        assert_eq!(Fixed(-412.666_666_7).to_string(), "-412.6667");
        // Exact binary ties round to even, as glibc does.
        assert_eq!(Fixed(0.031_25).to_string(), "0.0312");
        assert_eq!(Fixed(0.093_75).to_string(), "0.0938");
    }

    #[test]
    fn summary_skips_text_and_runid() {
        let report = TrecReport {
            run_id: "r".to_owned(),
            per_query: true,
            columns: vec![
                Column {
                    name: "runid".to_owned(),
                    kind: ColumnKind::RunId,
                },
                Column {
                    name: "relstring".to_owned(),
                    kind: ColumnKind::Text,
                },
                Column {
                    name: "map".to_owned(),
                    kind: ColumnKind::Mean,
                },
            ],
            queries: vec![QueryRow {
                qid: "q".to_owned(),
                values: vec![0.0, 0.0, 0.25],
                relstring: Some("10".to_owned()),
            }],
            summary: vec![0.0, 0.0, 0.25],
        };
        let mut text = Vec::new();
        report.write(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "relstring             \tq\t'10'\nmap                   \tq\t0.2500\nrunid                 \tall\tr\nmap                   \tall\t0.2500\n"
        );
        assert_eq!(report.summary("map"), Some(0.25));
        assert_eq!(report.summary("runid"), None);
        assert_eq!(report.query_value("q", "map"), Some(0.25));
    }
}
