//! Progress of long work (key generation, preprocessing), reported through a callback.
//!
//! Library functions take a [`Progress`] and report into it; they never draw anything. The CLI
//! gives them one that draws a terminal bar, tests give them [`Progress::none`] or a recorder.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use coterie_base::{Progress, ProgressEvent};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let log = seen.clone();
//! let progress = Progress::new(move |e: &ProgressEvent| {
//!     if let ProgressEvent::Advance { done, .. } = e {
//!         log.lock().unwrap().push(*done);
//!     }
//! });
//! let task = progress.task("triples", 3);
//! task.inc(1);
//! task.inc(2);
//! task.finish();
//! assert_eq!(*seen.lock().unwrap(), vec![1, 3]);
//! ```

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One progress report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent {
    /// A task started; `total` units of work are expected.
    Start {
        /// What the task does, e.g. `"party 1: OT triples"`.
        label: String,
        /// Units of work expected.
        total: u64,
    },
    /// The task has done `done` of `total` units.
    Advance {
        /// The task's label.
        label: String,
        /// Units done so far.
        done: u64,
        /// Units expected.
        total: u64,
    },
    /// The task ended (completed or abandoned).
    Finish {
        /// The task's label.
        label: String,
    },
}

type Sink = Arc<dyn Fn(&ProgressEvent) + Send + Sync>;

/// Where progress goes: a callback, or nowhere. Cheap to clone and to pass down.
#[derive(Clone, Default)]
pub struct Progress {
    sink: Option<Sink>,
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("reporting", &self.sink.is_some())
            .finish()
    }
}

impl Progress {
    /// Progress that goes nowhere.
    pub fn none() -> Self {
        Self { sink: None }
    }

    /// Progress delivered to `f` (called from whatever thread does the work; keep it quick).
    pub fn new(f: impl Fn(&ProgressEvent) + Send + Sync + 'static) -> Self {
        Self {
            sink: Some(Arc::new(f)),
        }
    }

    /// Whether anything listens; work may skip computing progress details when nothing does.
    pub fn is_reporting(&self) -> bool {
        self.sink.is_some()
    }

    /// Starts a task of `total` units; reports [`ProgressEvent::Start`].
    pub fn task(&self, label: impl Into<String>, total: u64) -> ProgressTask {
        let label = label.into();
        if let Some(s) = &self.sink {
            s(&ProgressEvent::Start {
                label: label.clone(),
                total,
            });
        }
        ProgressTask {
            sink: self.sink.clone(),
            label,
            total,
            done: AtomicU64::new(0),
            finished: AtomicBool::new(false),
        }
    }
}

/// A running task. Reports [`ProgressEvent::Finish`] on [`ProgressTask::finish`] or when dropped.
pub struct ProgressTask {
    sink: Option<Sink>,
    label: String,
    total: u64,
    done: AtomicU64,
    finished: AtomicBool,
}

impl fmt::Debug for ProgressTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressTask")
            .field("label", &self.label)
            .field("done", &self.done())
            .field("total", &self.total)
            .finish()
    }
}

impl ProgressTask {
    /// Adds `n` units done.
    pub fn inc(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        self.report(done);
    }

    /// Sets the units done.
    pub fn set(&self, done: u64) {
        self.done.store(done, Ordering::Relaxed);
        self.report(done);
    }

    /// Units done so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Units expected.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Ends the task.
    pub fn finish(self) {
        // Drop reports Finish.
    }

    fn report(&self, done: u64) {
        if let Some(s) = &self.sink {
            s(&ProgressEvent::Advance {
                label: self.label.clone(),
                done,
                total: self.total,
            });
        }
    }
}

impl Drop for ProgressTask {
    fn drop(&mut self) {
        if !self.finished.swap(true, Ordering::Relaxed)
            && let Some(s) = &self.sink
        {
            s(&ProgressEvent::Finish {
                label: std::mem::take(&mut self.label),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn events_arrive_in_order_and_finish_once() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        let p = Progress::new(move |e| l.lock().unwrap().push(e.clone()));
        assert!(p.is_reporting());
        {
            let t = p.task("work", 10);
            t.inc(4);
            t.set(10);
            assert_eq!(t.done(), 10);
            assert_eq!(t.total(), 10);
        } // dropped: Finish
        let log = log.lock().unwrap();
        assert_eq!(
            *log,
            vec![
                ProgressEvent::Start {
                    label: "work".into(),
                    total: 10
                },
                ProgressEvent::Advance {
                    label: "work".into(),
                    done: 4,
                    total: 10
                },
                ProgressEvent::Advance {
                    label: "work".into(),
                    done: 10,
                    total: 10
                },
                ProgressEvent::Finish {
                    label: "work".into()
                },
            ]
        );
    }

    #[test]
    fn none_reports_nothing_and_counts_anyway() {
        let p = Progress::none();
        assert!(!p.is_reporting());
        let t = p.task("quiet", 5);
        t.inc(2);
        assert_eq!(t.done(), 2);
        t.finish();
    }
}
