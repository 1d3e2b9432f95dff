//! The arguments of `eval --watch`: online evaluation of a growing source into a rolling
//! run, its cost caps and its alerts.

use std::time::Duration;

use clap::Args;

/// `eval --watch`.
#[derive(Debug, Clone, Default, Args)]
pub struct WatchArgs {
    /// Keep watching the dataset (a JSONL file or trace export being appended to, or a
    /// phoenix://HOST:PORT/PROJECT): poll it every --interval, score only the samples not
    /// scored before (the run directory is the memory: a restart resumes), sampled by id
    /// with --sample, into one rolling run; Ctrl-C stops it (exit 130). A health line per
    /// poll on stderr
    #[arg(long)]
    pub watch: bool,

    /// Time between polls: 500ms, 30s, 5m, 1h
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = interval)]
    pub interval: Duration,

    /// Stop spending when the judge has spent USD dollars in the last hour (needs a price
    /// for the model); scoring resumes when the hour frees room. Says so on stderr and to
    /// the alert webhook and command
    #[arg(long, value_name = "USD", value_parser = dollars)]
    pub max_cost_per_hour: Option<f64>,

    /// Stop spending when the judge has spent USD dollars in the last day
    #[arg(long, value_name = "USD", value_parser = dollars)]
    pub max_cost_per_day: Option<f64>,

    /// POST a JSON alert here when a metric's latest window falls significantly below its
    /// baseline (the 95% bootstrap interval of the difference of means wholly below zero),
    /// and when a cost cap stops the spending
    #[arg(long, value_name = "URL")]
    pub alert_webhook: Option<String>,

    /// Run this shell command on the same alerts: the alert's JSON on its stdin,
    /// RAGEVAL_ALERT_KIND and RAGEVAL_ALERT_METRIC in its environment
    #[arg(long, value_name = "COMMAND")]
    pub alert_command: Option<String>,

    /// Scores in the latest window an alert compares
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub alert_window: usize,

    /// Scores in the baseline window (the rolling run's first ones)
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub baseline_window: usize,

    /// Stop after N polls (for a scheduler that starts the watch itself)
    #[arg(long, value_name = "N")]
    pub max_polls: Option<u64>,
}

/// `500ms`, `30s`, `5m`, `1h`, or plain seconds.
fn interval(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: e.g. 500ms, 30s, 5m, 1h"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(format!("`{other}` is not a unit of time: ms, s, m or h")),
    };
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!("`{text}` is not a positive duration"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

fn dollars(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err(format!("`{text}` is not an amount of US dollars")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_read_their_unit() {
        assert_eq!(interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(interval("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(interval("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(interval("2"), Ok(Duration::from_secs(2)));
        assert!(interval("0s").is_err() && interval("5d").is_err() && interval("x").is_err());
    }
}
