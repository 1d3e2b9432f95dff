//! Cancelling a judge: calls in flight abort at once, later calls fail with `Cancelled`
//! and make no request, and what finished before stays in the cache, replayable.

use std::time::Duration;

use rageval_judge::{Cache, CacheMode, JudgeError};
use rageval_testkit::{MockServer, Reply};

use crate::support::{GOOD, Verdict, batch, config, judge, last_user_text, scripted, settings};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_aborts_calls_in_flight_and_keeps_finished_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    // "quick" requests answer at once, "stuck" ones hang for a minute.
    let mut mock_config = scripted(|body, _| {
        if last_user_text(body).contains("stuck") {
            Reply::Hang
        } else {
            Reply::Content(GOOD.into())
        }
    });
    mock_config.hang = Duration::from_secs(60);
    let mock = MockServer::start(mock_config).await.unwrap();
    let j = judge(
        settings(&mock, Duration::from_secs(120)),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::ReadWrite),
    );
    let quick = batch("c", 5, "quick");
    for result in j.ask_all::<Verdict>(quick.clone()).await {
        result.unwrap();
    }

    let stuck = batch("c", 8, "stuck");
    let running = tokio::spawn({
        let j = j.clone();
        async move { j.ask_all::<Verdict>(stuck).await }
    });
    // Wait until all eight hang inside the mock, then cancel.
    for _ in 0..200 {
        if mock.stats().in_flight == 8 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(mock.stats().in_flight, 8);
    j.cancel_token().cancel();
    let results = running.await.unwrap();
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(JudgeError::Cancelled))),
        "{results:?}"
    );
    // The aborted requests were hung up on, not left to finish.
    for _ in 0..200 {
        if mock.stats().client_disconnects == 8 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(mock.stats().client_disconnects, 8);

    // Later calls fail without a request, even ones the cache could answer.
    let before = mock.stats().requests;
    let err = j.ask::<Verdict>(&quick[0]).await.unwrap_err();
    assert!(err.is_stop() && err.to_string() == "cancelled", "{err}");
    assert_eq!(mock.stats().requests, before);
    // Cancelled calls are not on the ladder; the five finished ones are.
    assert_eq!(j.rung_counts()["c@1"].total(), 5);

    // The cache holds exactly the finished answers and replays them offline.
    assert_eq!(Cache::open(&path).unwrap().len().await.unwrap(), 5);
    let replay = judge(
        settings(&mock, Duration::from_secs(5)),
        Some(Cache::open(&path).unwrap()),
        config(CacheMode::Offline),
    );
    for result in replay.ask_all::<Verdict>(quick).await {
        assert!(result.unwrap().cached);
    }
    assert_eq!(mock.stats().requests, before);
}
