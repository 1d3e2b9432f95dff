//! Prints the simulation figures of `docs/ranking.md`: the ranking algorithms on the
//! simulated judge of `rageval_rank::simulation`, n = 200 contexts with 60 useful, both noise
//! settings. First the ten questions of the acceptance test (seeds 0–9, moderate noise), then
//! means over 50 questions, then the listwise and Bradley–Terry budgets against each other.
//! "Waves" is `Σ ⌈calls/32⌉` over the rounds: times a call's latency, the wall time at 32
//! calls in flight. Run: `cargo run --release -p rageval-rank --example simulate`.

use std::io::Write;

use rageval_rank::simulation::{NoiseModel, SimulatedQuestion, SimulationFigures, simulate};
use rageval_rank::{Algorithm, ListwiseSettings, RankSettings};

/// Questions averaged in the tables of means.
const QUESTIONS: u64 = 50;
/// Calls in flight for the waves column (the benchmark's concurrency).
const CONCURRENCY: usize = 32;

fn variants() -> Vec<(&'static str, RankSettings, bool)> {
    let with = |algorithm, grade_batch, both_orders| RankSettings {
        algorithm,
        grade_batch,
        insertion_both_orders: both_orders,
        ..RankSettings::default()
    };
    // (name, settings, whether the noise of lists is doubled)
    vec![
        ("listwise", with(Algorithm::Listwise, 10, false), false),
        (
            "listwise, list noise ×2",
            with(Algorithm::Listwise, 10, false),
            true,
        ),
        (
            "listwise, graded one by one",
            with(Algorithm::Listwise, 1, false),
            false,
        ),
        (
            "bradley-terry",
            with(Algorithm::BradleyTerry, 10, false),
            false,
        ),
        (
            "bradley-terry, graded one by one",
            with(Algorithm::BradleyTerry, 1, false),
            false,
        ),
        (
            "insertion (seed: one order)",
            with(Algorithm::Insertion, 10, false),
            false,
        ),
        (
            "insertion, both orders",
            with(Algorithm::Insertion, 10, true),
            false,
        ),
    ]
}

fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.3}"))
}

async fn run(
    noise: NoiseModel,
    settings: &RankSettings,
    seed: u64,
) -> Result<SimulationFigures, rageval_rank::RankError> {
    let question = SimulatedQuestion::new(200, 60, noise, seed);
    simulate(
        &question,
        &RankSettings {
            seed,
            ..settings.clone()
        },
    )
    .await
}

async fn many(
    noise: NoiseModel,
    settings: &RankSettings,
) -> Result<Vec<SimulationFigures>, rageval_rank::RankError> {
    let mut all = Vec::new();
    for seed in 0..QUESTIONS {
        all.push(run(noise, settings, seed).await?);
    }
    Ok(all)
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

fn mean_of(all: &[SimulationFigures], measure: impl Fn(&SimulationFigures) -> f64) -> f64 {
    all.iter().map(measure).sum::<f64>() / all.len().max(1) as f64
}

fn noisier_lists(noise: NoiseModel) -> NoiseModel {
    NoiseModel {
        list_scale: 2.0 * noise.list_scale,
        ..noise
    }
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
        "| algorithm | seed | calls | rounds | waves | nDCG@10 | τ-b useful | τ-b all | inconsistent | useful→bad | bad→useful |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|")?;
    let all_variants = variants();
    for (name, settings, _) in all_variants.iter().filter(|(name, ..)| {
        ["listwise", "bradley-terry", "insertion (seed: one order)"].contains(name)
    }) {
        for seed in 0..10 {
            let f = run(NoiseModel::MODERATE, settings, seed).await?;
            writeln!(
                out,
                "| {name} | {seed} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                f.calls,
                f.rounds,
                f.waves(CONCURRENCY),
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
            "\n## {noise_name} noise (τ = {}, β = {}, σ_g = {}): means over {QUESTIONS} questions (seeds 0-{})\n",
            noise.pairwise_scale,
            noise.position_bias,
            noise.grade_noise,
            QUESTIONS - 1
        )?;
        writeln!(
            out,
            "| algorithm | calls | rounds | waves | nDCG@10 (min) | τ-b useful (min) | τ-b all | inconsistent | nDCG@10 ≥ 0.95 | τ-b useful ≥ 0.7 |"
        )?;
        writeln!(out, "|---|---|---|---|---|---|---|---|---|---|")?;
        for (name, settings, noisy_lists) in &all_variants {
            let noise = if *noisy_lists {
                noisier_lists(noise)
            } else {
                noise
            };
            let all = many(noise, settings).await?;
            let calls = mean_of(&all, |f| f.calls as f64);
            let rounds = mean_of(&all, |f| f64::from(f.rounds));
            let waves = mean_of(&all, |f| f.waves(CONCURRENCY) as f64);
            let (ndcg, ndcg_min) = mean_min(&all, |f| f.truth.ndcg_at_10);
            let (tau, tau_min) = mean_min(&all, |f| f.truth.kendall_tau_b_useful);
            let (tau_all, _) = mean_min(&all, |f| f.truth.kendall_tau_b_all);
            let inconsistent = if all.iter().any(|f| f.position_inconsistency.is_some()) {
                format!("{:.3}", mean_min(&all, |f| f.position_inconsistency).0)
            } else {
                "—".to_owned()
            };
            let ndcg_ok = all
                .iter()
                .filter(|f| f.truth.ndcg_at_10.is_some_and(|v| v >= 0.95))
                .count();
            let tau_ok = all
                .iter()
                .filter(|f| f.truth.kendall_tau_b_useful.is_some_and(|v| v >= 0.7))
                .count();
            writeln!(
                out,
                "| {name} | {calls:.0} | {rounds:.1} | {waves:.1} | {ndcg:.3} ({ndcg_min:.3}) | {tau:.3} ({tau_min:.3}) | {tau_all:.3} | {inconsistent} | {ndcg_ok}/{QUESTIONS} | {tau_ok}/{QUESTIONS} |"
            )?;
        }
    }
    writeln!(
        out,
        "\n## Listwise budgets: means over {QUESTIONS} questions (moderate / heavy; last column: moderate with list noise ×2)\n"
    )?;
    writeln!(
        out,
        "| window | partitions | head | head partitions | calls | waves | nDCG@10 | τ-b useful | τ-b useful, lists ×2 |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|")?;
    for (window, partitions, head, head_partitions) in [
        (5, 5, 20, 8),
        (10, 3, 20, 3),
        (10, 4, 20, 3),
        (10, 5, 0, 0),
        (10, 5, 20, 3),
        (10, 5, 20, 8),
        (10, 5, 30, 5),
        (10, 8, 20, 8),
        (20, 5, 20, 8),
    ] {
        let settings = RankSettings {
            listwise: ListwiseSettings {
                window,
                partitions,
                head,
                head_partitions,
            },
            ..RankSettings::default()
        };
        let mut cells = Vec::new();
        for noise in [
            NoiseModel::MODERATE,
            NoiseModel::HEAVY,
            noisier_lists(NoiseModel::MODERATE),
        ] {
            let all = many(noise, &settings).await?;
            cells.push((
                mean_of(&all, |f| f.calls as f64),
                mean_of(&all, |f| f.waves(CONCURRENCY) as f64),
                mean_min(&all, |f| f.truth.ndcg_at_10).0,
                mean_min(&all, |f| f.truth.kendall_tau_b_useful).0,
            ));
        }
        let [(c1, w1, n1, t1), (_, _, n2, t2), (_, _, _, t3)] = [cells[0], cells[1], cells[2]];
        writeln!(
            out,
            "| {window} | {partitions} | {head} | {head_partitions} | {c1:.0} | {w1:.1} | {n1:.3} / {n2:.3} | {t1:.3} / {t2:.3} | {t3:.3} |"
        )?;
    }
    writeln!(
        out,
        "\n## Bradley–Terry budgets: means over {QUESTIONS} questions (moderate / heavy)\n"
    )?;
    writeln!(
        out,
        "| opponents | head | calls | waves | nDCG@10 | τ-b useful |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for (opponents, head) in [(4, 15), (5, 20), (10, 30), (15, 30), (10, 40)] {
        let settings = RankSettings {
            algorithm: Algorithm::BradleyTerry,
            opponents,
            head,
            ..RankSettings::default()
        };
        let mut cells = Vec::new();
        for noise in [NoiseModel::MODERATE, NoiseModel::HEAVY] {
            let all = many(noise, &settings).await?;
            cells.push((
                mean_of(&all, |f| f.calls as f64),
                mean_of(&all, |f| f.waves(CONCURRENCY) as f64),
                mean_min(&all, |f| f.truth.ndcg_at_10).0,
                mean_min(&all, |f| f.truth.kendall_tau_b_useful).0,
            ));
        }
        let [(c1, w1, n1, t1), (c2, _, n2, t2)] = [cells[0], cells[1]];
        writeln!(
            out,
            "| {opponents} | {head} | {c1:.0} / {c2:.0} | {w1:.1} | {n1:.3} / {n2:.3} | {t1:.3} / {t2:.3} |"
        )?;
    }
    Ok(())
}
