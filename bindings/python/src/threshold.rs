//! `coterie._native.threshold`: see python/coterie/threshold.py for the Python-facing API.

use pyo3::prelude::*;

/// Registers this module's classes and functions.
pub(crate) fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
