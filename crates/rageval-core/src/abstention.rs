//! The abstention 2×2 table: per sample, do the contexts support an answer, and did the
//! answer decline? A metric names each sample's [`Quadrant`] in its evidence under
//! [`ABSTENTION_QUADRANT`]; a run's summary counts the quadrants into an
//! [`AbstentionTable`] with its rates and 95% Wilson intervals. This module judges nothing.

use serde::{Deserialize, Serialize};

use crate::stats::wilson;

/// The evidence key under which a metric names a sample's quadrant.
pub const ABSTENTION_QUADRANT: &str = "abstention_quadrant";

/// Where one sample falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quadrant {
    /// Supported and answered: right.
    AnsweredSupported,
    /// Supported, yet declined: a false abstention.
    AbstainedSupported,
    /// Unsupported, yet answered: should have declined.
    AnsweredUnsupported,
    /// Unsupported and declined: right.
    AbstainedUnsupported,
}

impl Quadrant {
    /// Every quadrant, in the table's order.
    pub const ALL: [Quadrant; 4] = [
        Quadrant::AnsweredSupported,
        Quadrant::AbstainedSupported,
        Quadrant::AnsweredUnsupported,
        Quadrant::AbstainedUnsupported,
    ];

    /// The quadrant of a sample whose contexts do (`supported`) or do not support an
    /// answer and whose answer did (`abstained`) or did not decline.
    pub fn of(supported: bool, abstained: bool) -> Self {
        match (supported, abstained) {
            (true, false) => Quadrant::AnsweredSupported,
            (true, true) => Quadrant::AbstainedSupported,
            (false, false) => Quadrant::AnsweredUnsupported,
            (false, true) => Quadrant::AbstainedUnsupported,
        }
    }

    /// The name in evidence and in `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            Quadrant::AnsweredSupported => "answered_supported",
            Quadrant::AbstainedSupported => "abstained_supported",
            Quadrant::AnsweredUnsupported => "answered_unsupported",
            Quadrant::AbstainedUnsupported => "abstained_unsupported",
        }
    }

    /// The quadrant named `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Quadrant::ALL.into_iter().find(|q| q.name() == name)
    }

    /// Whether the behaviour was right: answered when supported, declined when not.
    pub fn is_right(self) -> bool {
        matches!(
            self,
            Quadrant::AnsweredSupported | Quadrant::AbstainedUnsupported
        )
    }
}

/// A proportion with its count and 95% Wilson interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// `numerator ÷ denominator`; `null` when the denominator is 0.
    pub value: Option<f64>,
    pub numerator: usize,
    pub denominator: usize,
    /// 95% Wilson score interval, `[low, high]`; `null` when the denominator is 0.
    pub ci95: Option<[f64; 2]>,
}

impl Rate {
    fn of(numerator: usize, denominator: usize) -> Self {
        let value = (denominator > 0).then(|| numerator as f64 / denominator as f64);
        Rate {
            value,
            numerator,
            denominator,
            ci95: value
                .and_then(|p| wilson(p, denominator))
                .map(|i| [i.low, i.high]),
        }
    }
}

/// The 2×2 table of a run and its rates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AbstentionTable {
    pub answered_supported: usize,
    pub abstained_supported: usize,
    pub answered_unsupported: usize,
    pub abstained_unsupported: usize,
}

/// The rates of an [`AbstentionTable`], each with its interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbstentionRates {
    /// Declined ÷ unsupported: how often it abstains when it should (abstention recall).
    pub abstention_recall: Rate,
    /// Declined ÷ supported: how often it refuses an answerable question.
    pub false_abstention_rate: Rate,
    /// Unsupported ÷ declined: how often an abstention was warranted.
    pub abstention_precision: Rate,
    /// Right quadrants ÷ samples (the metric's mean).
    pub accuracy: Rate,
}

impl AbstentionTable {
    /// Counts one sample.
    pub fn add(&mut self, quadrant: Quadrant) {
        *match quadrant {
            Quadrant::AnsweredSupported => &mut self.answered_supported,
            Quadrant::AbstainedSupported => &mut self.abstained_supported,
            Quadrant::AnsweredUnsupported => &mut self.answered_unsupported,
            Quadrant::AbstainedUnsupported => &mut self.abstained_unsupported,
        } += 1;
    }

    /// The count of `quadrant`.
    pub fn count(&self, quadrant: Quadrant) -> usize {
        match quadrant {
            Quadrant::AnsweredSupported => self.answered_supported,
            Quadrant::AbstainedSupported => self.abstained_supported,
            Quadrant::AnsweredUnsupported => self.answered_unsupported,
            Quadrant::AbstainedUnsupported => self.abstained_unsupported,
        }
    }

    /// Samples counted.
    pub fn total(&self) -> usize {
        Quadrant::ALL.into_iter().map(|q| self.count(q)).sum()
    }

    /// The rates, each over its own denominator.
    pub fn rates(&self) -> AbstentionRates {
        let unsupported = self.answered_unsupported + self.abstained_unsupported;
        let supported = self.answered_supported + self.abstained_supported;
        let declined = self.abstained_supported + self.abstained_unsupported;
        AbstentionRates {
            abstention_recall: Rate::of(self.abstained_unsupported, unsupported),
            false_abstention_rate: Rate::of(self.abstained_supported, supported),
            abstention_precision: Rate::of(self.abstained_unsupported, declined),
            accuracy: Rate::of(
                self.answered_supported + self.abstained_unsupported,
                self.total(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_serde_agrees() {
        for quadrant in Quadrant::ALL {
            assert_eq!(Quadrant::from_name(quadrant.name()), Some(quadrant));
            let json = serde_json::to_value(quadrant).unwrap_or_default();
            assert_eq!(json, serde_json::json!(quadrant.name()));
        }
        assert_eq!(Quadrant::from_name("answered"), None);
    }

    /// Five samples by hand: answered-supported 2, abstained-supported 1,
    /// answered-unsupported 1, abstained-unsupported 1. Abstention recall 1/2, false
    /// abstention 1/3, precision 1/2, accuracy 3/5. Wilson (z = 1.96) by hand: 1/2 of 2 →
    /// centre 0.5, half 0.4055 → [0.0945, 0.9055]; 1/3 of 3 → centre (0.3333 + 0.6403) /
    /// 2.2805 = 0.4269, half 0.8595 · √(0.07407 + 0.10670) = 0.3654 → [0.0615, 0.7923];
    /// 3/5 of 5 → centre (0.6 + 0.3841) / 1.7683 = 0.5565, half 1.1084 · √(0.048 + 0.03841)
    /// = 0.3258 → [0.2307, 0.8824].
    #[test]
    fn five_samples_give_the_hand_computed_table() {
        let mut table = AbstentionTable::default();
        for (supported, abstained) in [
            (true, false),
            (true, false),
            (true, true),
            (false, false),
            (false, true),
        ] {
            table.add(Quadrant::of(supported, abstained));
        }
        assert_eq!(table.total(), 5);
        let rates = table.rates();
        let close = |rate: &Rate, value: f64, [low, high]: [f64; 2]| {
            let got = rate.ci95.unwrap_or([9.0, 9.0]);
            assert!(
                (rate.value.unwrap_or(9.0) - value).abs() < 1e-12,
                "{rate:?}"
            );
            assert!(
                (got[0] - low).abs() < 5e-4 && (got[1] - high).abs() < 5e-4,
                "{rate:?}"
            );
        };
        close(&rates.abstention_recall, 0.5, [0.0945, 0.9055]);
        close(&rates.false_abstention_rate, 1.0 / 3.0, [0.0615, 0.7923]);
        close(&rates.abstention_precision, 0.5, [0.0945, 0.9055]);
        close(&rates.accuracy, 0.6, [0.2307, 0.8824]);
        assert_eq!(rates.accuracy.numerator, 3);
    }

    #[test]
    fn an_empty_side_has_no_rate() {
        let mut table = AbstentionTable::default();
        table.add(Quadrant::AnsweredSupported);
        let rates = table.rates();
        assert_eq!(rates.abstention_recall.value, None);
        assert_eq!(rates.abstention_recall.ci95, None);
        assert_eq!(rates.false_abstention_rate.value, Some(0.0));
    }
}
