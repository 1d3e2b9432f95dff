//! Prints the simulation figures of `docs/ranking.md`: the ranking algorithms on the
//! simulated judge of `rageval_rank::simulation`, n = 200 contexts with 60 useful, both noise
//! settings. First the ten questions of the acceptance test (seeds 0–9, moderate noise), then
//! means over 50 questions, then the Bradley–Terry budget settings against each other. Run: `cargo run --release -p rageval-rank --example simulate`.

use std::io::Write;

use rageval_rank::simulation::{NoiseModel, SimulatedQuestion, SimulationFigures, simulate};
use rageval_rank::{Algorithm, RankSettings};

const VARIANTS: [(&str, Algorithm, bool); 3] = [
    ("bradley-terry", Algorithm::BradleyTerry, false),
    ("insertion (seed: one order)", Algorithm::Insertion, false),
    ("insertion, both orders", Algorithm::Insertion, true),
];

fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.3}"))
}

async fn run(
    noise: NoiseModel,
    algorithm: Algorithm,
    both_orders: bool,
    seed: u64,
) -> Result<SimulationFigures, rageval_rank::RankError> {
    let settings = RankSettings {
        algorithm,
        insertion_both_orders: both_orders,
        ..RankSettings::default()
    };
    run_with(noise, settings, seed).await
}

async fn run_with(
    noise: NoiseModel,
    settings: RankSettings,
    seed: u64,
) -> Result<SimulationFigures, rageval_rank::RankError> {
    let question = SimulatedQuestion::new(200, 60, noise, seed);
    simulate(&question, &RankSettings { seed, ..settings }).await
}

/// Mean and minimum of a measure that is defined on every question (it is, for n = 200).
fn mean_min(
    all: &[SimulationFigures],
    measure: impl Fn(&SimulationFigures) -> Option<f64>,
) -> (f64, f64) {
    let values: Vec<f64> = all.iter().filter_map(&measure).collect();
    let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
    (mean, values.iter().copied().fold(f64::INFINITY, f64::min))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "## The acceptance test's questions (moderate noise, seeds 0-9)\n"
    )?;
    writeln!(
        out,
        "| algorithm | seed | calls | rounds | nDCG@10 | τ-b useful | τ-b all | inconsistent | useful→bad | bad→useful |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|")?;
    for (name, algorithm, both_orders) in &VARIANTS[..2] {
        for seed in 0..10 {
            let f = run(NoiseModel::MODERATE, *algorithm, *both_orders, seed).await?;
            writeln!(
                out,
                "| {name} | {seed} | {} | {} | {} | {} | {} | {} | {} | {} |",
                f.calls,
                f.rounds,
                figure(f.truth.ndcg_at_10),
                figure(f.truth.kendall_tau_b_useful),
                figure(f.truth.kendall_tau_b_all),
                figure(f.position_inconsistency),
                f.truth.useful_graded_bad,
                f.truth.bad_graded_useful,
            )?;
        }
    }
    for (noise_name, noise) in [
        ("moderate", NoiseModel::MODERATE),
        ("heavy", NoiseModel::HEAVY),
    ] {
        writeln!(
            out,
            "\n## {noise_name} noise (τ = {}, β = {}, σ_g = {}): means over 50 questions (seeds 0-49)\n",
            noise.pairwise_scale, noise.position_bias, noise.grade_noise
        )?;
        writeln!(
            out,
            "| algorithm | calls | rounds | nDCG@10 (min) | τ-b useful (min) | τ-b all | inconsistent | nDCG@10 ≥ 0.95 | τ-b useful ≥ 0.7 |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|---|---|")?;
        for (name, algorithm, both_orders) in VARIANTS {
            let mut all = Vec::new();
            for seed in 0..50 {
                all.push(run(noise, algorithm, both_orders, seed).await?);
            }
            let count = all.len() as f64;
            let calls = all.iter().map(|f| f.calls as f64).sum::<f64>() / count;
            let rounds = all.iter().map(|f| f64::from(f.rounds)).sum::<f64>() / count;
            let (ndcg, ndcg_min) = mean_min(&all, |f| f.truth.ndcg_at_10);
            let (tau, tau_min) = mean_min(&all, |f| f.truth.kendall_tau_b_useful);
            let (tau_all, _) = mean_min(&all, |f| f.truth.kendall_tau_b_all);
            let (inconsistent, _) = mean_min(&all, |f| f.position_inconsistency);
            let ndcg_ok = all
                .iter()
                .filter(|f| f.truth.ndcg_at_10.is_some_and(|v| v >= 0.95))
                .count();
            let tau_ok = all
                .iter()
                .filter(|f| f.truth.kendall_tau_b_useful.is_some_and(|v| v >= 0.7))
                .count();
            let inconsistent = if both_orders || algorithm == Algorithm::BradleyTerry {
                format!("{inconsistent:.3}")
            } else {
                "—".to_owned()
            };
            writeln!(
                out,
                "| {name} | {calls:.0} | {rounds:.1} | {ndcg:.3} ({ndcg_min:.3}) | {tau:.3} ({tau_min:.3}) | {tau_all:.3} | {inconsistent} | {ndcg_ok}/50 | {tau_ok}/50 |"
            )?;
        }
    }
    writeln!(
        out,
        "\n## Bradley–Terry budgets: means over 50 questions (moderate / heavy)\n"
    )?;
    writeln!(out, "| opponents | head | calls | nDCG@10 | τ-b useful |")?;
    writeln!(out, "|---|---|---|---|---|")?;
    for (opponents, head) in [(4, 15), (5, 20), (10, 30), (15, 30), (10, 40)] {
        let settings = RankSettings {
            opponents,
            head,
            ..RankSettings::default()
        };
        let mut cells = Vec::new();
        for noise in [NoiseModel::MODERATE, NoiseModel::HEAVY] {
            let mut all = Vec::new();
            for seed in 0..50 {
                all.push(run_with(noise, settings.clone(), seed).await?);
            }
            let calls = all.iter().map(|f| f.calls as f64).sum::<f64>() / all.len() as f64;
            let (ndcg, _) = mean_min(&all, |f| f.truth.ndcg_at_10);
            let (tau, _) = mean_min(&all, |f| f.truth.kendall_tau_b_useful);
            cells.push((calls, ndcg, tau));
        }
        let [(c1, n1, t1), (c2, n2, t2)] = [cells[0], cells[1]];
        writeln!(
            out,
            "| {opponents} | {head} | {c1:.0} / {c2:.0} | {n1:.3} / {n2:.3} | {t1:.3} / {t2:.3} |"
        )?;
    }
    Ok(())
}
