//! The one loop of every judged command: units of work (samples, questions) stream in, a
//! bounded number are worked on at once, and each result is handed to the journal in input
//! order as soon as it and those before it are done. Once the run must stop (Ctrl-C, a cap,
//! a judge halted as unavailable) no further unit starts; those in flight finish and are
//! handed over with `stopped = true`, so the journal can hold back what the stop spoiled
//! (a cell refused its judge call is not done, it is left for the resumed run).
//!
//! Memory holds the units in flight, never the whole input.

use std::future::Future;

use futures_util::StreamExt;

/// Works on every unit of `units`, at most `in_flight` at once, and calls `finish` with
/// each result in input order. `stopped` is asked before each unit starts and when its
/// result is handed over. An `Err` unit (bad input) or an error from `finish` ends the loop
/// after the units before it are finished.
pub async fn in_order<U, R, E, Fut>(
    units: impl Iterator<Item = Result<U, E>>,
    in_flight: usize,
    stopped: &(dyn Fn() -> bool + Sync),
    work: impl Fn(U) -> Fut,
    mut finish: impl FnMut(R, bool) -> Result<(), E>,
) -> Result<(), E>
where
    Fut: Future<Output = R>,
{
    let work = &work;
    let mut results = futures_util::stream::iter(units)
        .take_while(|_| std::future::ready(!stopped()))
        .map(|unit| async move {
            match unit {
                Ok(unit) => Ok(work(unit).await),
                Err(error) => Err(error),
            }
        })
        .buffered(in_flight.max(1));
    while let Some(result) = results.next().await {
        finish(result?, stopped())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn results_come_in_input_order_and_a_stop_starts_nothing_new() {
        let started = AtomicUsize::new(0);
        let stop_after = 5;
        let stopped = || started.load(Ordering::SeqCst) >= stop_after;
        let mut seen = Vec::new();
        in_order(
            (0..20u64).map(Ok::<_, String>),
            3,
            &stopped,
            |unit| {
                started.fetch_add(1, Ordering::SeqCst);
                async move {
                    // Later units finish first: order must still hold.
                    tokio::time::sleep(Duration::from_millis(20 - unit)).await;
                    unit
                }
            },
            |unit, _| {
                seen.push(unit);
                Ok(())
            },
        )
        .await
        .unwrap();
        assert_eq!(seen, (0..seen.len() as u64).collect::<Vec<_>>());
        assert!(seen.len() < 20 && seen.len() >= stop_after, "{seen:?}");
    }

    #[tokio::test]
    async fn a_bad_unit_ends_the_loop_after_the_ones_before_it() {
        let mut seen = Vec::new();
        let units = vec![Ok(1), Ok(2), Err("bad line 3".to_string()), Ok(4)];
        let result = in_order(
            units.into_iter(),
            4,
            &|| false,
            |unit: i32| async move { unit },
            |unit, _| {
                seen.push(unit);
                Ok(())
            },
        )
        .await;
        assert_eq!(result, Err("bad line 3".into()));
        assert_eq!(seen, vec![1, 2]);
    }
}
