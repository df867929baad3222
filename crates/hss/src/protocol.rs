//! protocol (in progress)
