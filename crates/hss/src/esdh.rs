//! esdh (in progress)
