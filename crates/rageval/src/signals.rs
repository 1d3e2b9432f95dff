//! The signals that stop a run — Ctrl-C at a terminal, SIGTERM from whatever manages the
//! process — as a cancel token for the engine, and which one arrived, for the exit code.
//! Nothing here prints: the commands say what stopped and how to go on.

use std::sync::atomic::{AtomicU8, Ordering};

use rageval_judge::CancelToken;

/// The signals that stop a run: Ctrl-C at a terminal, SIGTERM from whatever manages the
/// process (a CI job's cancel, Kubernetes ending a pod, `kill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Interrupt,
    Terminate,
}

impl StopSignal {
    /// The shell's code for a process ended by this signal (128 + its number), which the
    /// process exits with: 130 for SIGINT, 143 for SIGTERM.
    pub fn exit_code(self) -> u8 {
        match self {
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
        }
    }
}

/// The signal that tripped the cancel token, set once by the signal thread. Signals are
/// process-wide, so this is too; 0 until one arrives, then the signal's exit code.
static FIRST_STOP_SIGNAL: AtomicU8 = AtomicU8::new(0);

/// The signal that stopped this process's run, if one did: the exit code then follows it
/// (Ctrl-C 130, SIGTERM 143).
pub fn stop_signal() -> Option<StopSignal> {
    match FIRST_STOP_SIGNAL.load(Ordering::SeqCst) {
        130 => Some(StopSignal::Interrupt),
        143 => Some(StopSignal::Terminate),
        _ => None,
    }
}

/// A cancel switch tripped by the first Ctrl-C or SIGTERM: the run stops after the units in
/// flight, with every finished one journaled, and stays resumable (exit 130 or 143). A
/// second signal of either kind ends the process at once with that signal's code.
///
/// The handlers are installed whatever the process inherited: a shell that starts a
/// background job without job control (`nohup rageval eval … &` in a script) leaves SIGINT
/// ignored, and `kill -INT` should still stop the run resumably rather than not at all.
pub fn cancel_on_ctrl_c() -> CancelToken {
    let cancel = CancelToken::new();
    let trip = cancel.clone();
    let (ready, registered) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("stop-signals".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                let _ = ready.send(());
                return;
            };
            runtime.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let mut interrupts = signal(SignalKind::interrupt()).ok();
                let mut terminations = signal(SignalKind::terminate()).ok();
                let _ = ready.send(());
                if interrupts.is_none() && terminations.is_none() {
                    return;
                }
                let mut tripped = false;
                loop {
                    let received = tokio::select! {
                        Some(()) = next(&mut interrupts) => StopSignal::Interrupt,
                        Some(()) = next(&mut terminations) => StopSignal::Terminate,
                        else => return,
                    };
                    if tripped {
                        std::process::exit(i32::from(received.exit_code()));
                    }
                    tripped = true;
                    FIRST_STOP_SIGNAL.store(received.exit_code(), Ordering::SeqCst);
                    trip.cancel();
                }
            });
        });
    if spawned.is_ok() {
        // The handlers are in place before any work starts.
        let _ = registered.recv();
    }
    cancel
}

/// The next delivery of a signal stream; never, when the stream could not be registered.
async fn next(stream: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match stream {
        Some(stream) => stream.recv().await,
        None => std::future::pending().await,
    }
}
