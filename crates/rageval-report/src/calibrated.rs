//! `summary.json`'s `calibrated` block: per metric with human labels, the prediction-powered
//! mean (PPI++) beside the labels-only and judge-only means, as `rageval calibrate` and
//! `eval --labels` compute them (`rageval_core::calibration`).

use rageval_core::calibration::Estimate;
use serde::{Deserialize, Serialize};

/// One metric's calibrated mean: the PPI++ estimate's fields (`mean`, `ci95`, `n_labels`,
/// `lambda`, `method`, …) at the top, the two it is read against beside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibrated {
    #[serde(flatten)]
    pub estimate: Estimate,
    /// The mean of the labels alone, with its interval.
    pub labels_only: Estimate,
    /// The mean of the judge's scores alone, with its interval (any bias of the judge in it).
    pub judge_only: Estimate,
    /// The labels file, as it was named.
    pub labels: String,
}
