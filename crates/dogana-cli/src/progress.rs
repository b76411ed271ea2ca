//! The spinner of a long delivery: on standard error, only when standard error is a terminal,
//! and only once the delivery has taken more than a second, so that a quick delivery, a pipe, a
//! log file or a test sees nothing.
//!
//! The delivery engine reads, checks and publishes a file in one call without reporting progress,
//! so the spinner shows what is known honestly: the file, its size and the time elapsed.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a delivery runs before the spinner shows: one second, or the milliseconds of
/// `DOGANA_PROGRESS_AFTER_MS` (tests set 0, to show the spinner at once where it would show).
fn delay() -> Duration {
    std::env::var("DOGANA_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis)
}

/// A spinner running while it lives; dropping it stops and clears it.
pub struct Progress {
    done: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts the spinner's clock with this message; nothing is drawn, ever, when standard
    /// error is not a terminal.
    pub fn start(message: String) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress {
                done: None,
                thread: None,
            };
        }
        let (done, wait) = mpsc::channel::<()>();
        let delay = delay();
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            // Finished (or dropped) within the delay: nothing to show.
            if !matches!(wait.recv_timeout(delay), Err(RecvTimeoutError::Timeout)) {
                return;
            }
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                .with_elapsed(started.elapsed());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                    .expect("a valid template"),
            );
            bar.set_message(message);
            bar.enable_steady_tick(Duration::from_millis(120));
            let _ = wait.recv();
            bar.finish_and_clear();
        });
        Progress {
            done: Some(done),
            thread: Some(thread),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
