//! `coterie._native.bfv`: see python/coterie/bfv.py for the Python-facing API.

use pyo3::prelude::*;

/// Registers this module's classes and functions.
pub(crate) fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
