//! Terminal progress bars for the library crates' progress callbacks: the libraries report
//! through a [`coterie_base::Progress`], and only the CLI draws (indicatif, on stderr).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;

use coterie_base::{Progress, ProgressEvent};
use indicatif::{ProgressBar, ProgressStyle};

/// A [`Progress`] that draws one indicatif bar per task on stderr, each prefixed with
/// `label_prefix` and the task's label; [`Progress::none`] when stderr is not a terminal (so
/// logs and test output stay clean, and the libraries skip progress work).
pub fn progress_bar(label_prefix: &str) -> Progress {
    if !std::io::stderr().is_terminal() {
        return Progress::none();
    }
    let prefix = label_prefix.to_string();
    let bars: Mutex<HashMap<String, ProgressBar>> = Mutex::new(HashMap::new());
    Progress::new(move |e: &ProgressEvent| {
        let Ok(mut bars) = bars.lock() else {
            return;
        };
        match e {
            ProgressEvent::Start { label, total } => {
                let pb = ProgressBar::new(*total);
                let style = ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, eta {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar());
                pb.set_style(style);
                pb.set_prefix(if prefix.is_empty() {
                    label.clone()
                } else {
                    format!("{prefix} {label}")
                });
                if let Some(old) = bars.insert(label.clone(), pb) {
                    old.finish_and_clear();
                }
            }
            ProgressEvent::Advance { label, done, total } => {
                if let Some(pb) = bars.get(label) {
                    pb.set_length(*total);
                    pb.set_position(*done);
                }
            }
            ProgressEvent::Finish { label } => {
                if let Some(pb) = bars.remove(label) {
                    pb.finish();
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_without_a_start_and_repeated_starts_are_harmless() {
        // Under `cargo test` stderr is usually captured (not a terminal): no bars, no reporting.
        let p = progress_bar("party 0");
        if !std::io::stderr().is_terminal() {
            assert!(!p.is_reporting());
        }
        let t = p.task("x", 3);
        t.inc(2);
        let t2 = p.task("x", 5);
        t2.set(5);
        t.finish();
        t2.finish();
        assert_eq!(p.task("y", 1).total(), 1);
    }
}
