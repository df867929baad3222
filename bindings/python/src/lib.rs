//! `coterie._native`: the Rust side of coterie's Python package (PyO3, abi3, CPython 3.9+).
//!
//! Each submodule wraps one crate without re-implementing it: `bfv` (coterie-bfv), `tfhe`
//! (coterie-tfhe, single-key and multi-key), `hss` (coterie-hss) and `threshold`
//! (coterie-threshold's decryption-service client and nodes). The Python package `coterie`
//! (python/coterie) re-exports them with numpy conversions, docstrings and type hints.
//!
//! Conventions of every binding:
//! - Rust errors become `coterie.CoterieError` with the Rust message; arguments of the wrong
//!   type raise `TypeError` (PyO3's extraction), of the wrong value or size `ValueError`.
//! - Calls that may take over a millisecond release the GIL (`Python::detach`).
//! - Long calls take an optional `progress` callable, called as `progress(label, done, total)`
//!   from the working thread (with the GIL re-acquired).

use pyo3::prelude::*;

mod bfv;
mod hss;
mod tfhe;
mod threshold;

pyo3::create_exception!(
    coterie,
    CoterieError,
    pyo3::exceptions::PyException,
    "An error reported by coterie's Rust code; the message is the Rust error's."
);

/// Converts any displayable Rust error into a `CoterieError` carrying its message.
pub(crate) fn err(e: impl std::fmt::Display) -> PyErr {
    CoterieError::new_err(e.to_string())
}

/// A `ValueError` for an argument of the right type but a wrong value or size.
pub(crate) fn value_err(msg: impl Into<String>) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(msg.into())
}

/// A [`coterie_base::Progress`] that forwards every start, advance and finish to the Python
/// callable `cb` as `cb(label, done, total)` (`done == total` at the end); `None` reports
/// nowhere. An exception raised by the callable is printed by Python and otherwise ignored:
/// progress must never stop the work.
pub(crate) fn progress(cb: Option<Py<PyAny>>) -> coterie_base::Progress {
    use coterie_base::ProgressEvent;
    let Some(cb) = cb else {
        return coterie_base::Progress::none();
    };
    let totals = std::sync::Mutex::new(std::collections::HashMap::<String, u64>::new());
    coterie_base::Progress::new(move |e: &ProgressEvent| {
        let (label, done, total) = match e {
            ProgressEvent::Start { label, total } => {
                if let Ok(mut t) = totals.lock() {
                    t.insert(label.clone(), *total);
                }
                (label.clone(), 0, *total)
            }
            ProgressEvent::Advance { label, done, total } => (label.clone(), *done, *total),
            ProgressEvent::Finish { label } => {
                let total = totals
                    .lock()
                    .ok()
                    .and_then(|mut t| t.remove(label))
                    .unwrap_or(0);
                (label.clone(), total, total)
            }
        };
        Python::attach(|py| {
            if let Err(e) = cb.call1(py, (label, done, total)) {
                e.print(py);
            }
        });
    })
}

/// A single-threaded tokio runtime for a blocking call into async Rust.
pub(crate) fn runtime() -> PyResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(err)
}

/// Adds `sub` (built by `build`) as the submodule `name` of `parent`, registered in
/// `sys.modules` as `coterie._native.<name>` so that `import coterie._native.<name>` works.
fn submodule(
    parent: &Bound<'_, PyModule>,
    name: &str,
    build: impl FnOnce(&Bound<'_, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let py = parent.py();
    let sub = PyModule::new(py, name)?;
    build(&sub)?;
    parent.add_submodule(&sub)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item(format!("coterie._native.{name}"), &sub)?;
    Ok(())
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CoterieError", m.py().get_type::<CoterieError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    submodule(m, "bfv", bfv::register)?;
    submodule(m, "tfhe", tfhe::register)?;
    submodule(m, "hss", hss::register)?;
    submodule(m, "threshold", threshold::register)?;
    Ok(())
}
