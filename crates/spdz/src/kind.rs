//! The kinds of preprocessing material, driven by one table ([`KINDS`]).
//!
//! Every kind has a row that gives its name (also the stem of its file in the on-disk store),
//! how many shared elements one item holds (a Beaver triple: 3; a `d×d` matrix triple:
//! `3·d²`), whether it is kept per owner (input masks) and how many clear elements the owner of
//! an item keeps beside its shares (an input mask's value). The store, the in-memory material
//! and the producers read the table instead of matching on the kind, so a new kind (the matrix
//! triples of HE-based producers) is one row and one variant.

use coterie_net::PartyId;
use serde::{Deserialize, Serialize};

/// The kinds of preprocessing material. The per-kind facts are in [`KINDS`] ([`Kind::row`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    /// Beaver triples.
    Triples,
    /// Random bits.
    Bits,
    /// Uniformly random authenticated values (masks for openings).
    Randoms,
    /// Input masks for inputs of the given owner.
    InputMasks(PartyId),
    /// `d×d` matrix triples `([A], [B], [C])` with `C = A·B`, for the given `d ≥ 1`.
    MatrixTriples(usize),
}

/// One row of the material table: the facts the store and the producers need about a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindRow {
    /// The kind's name (and file stem), without its parameter: `"triples"`,
    /// `"input-masks"`, `"matrix-triples"`, ...
    pub name: &'static str,
    /// Shared elements per item; for a matrix kind, per matrix entry (multiply by `d²`).
    pub shared: usize,
    /// Whether the element count scales with `d²` (matrix kinds).
    pub matrix: bool,
    /// Whether the kind is kept per owner (its parameter is a party id).
    pub per_owner: bool,
    /// Clear elements the owner of an item keeps beside its shares (per item).
    pub owner_clear: usize,
}

/// The material table, one row per [`Kind`] variant, in declaration order.
pub const KINDS: [KindRow; 5] = [
    KindRow {
        name: "triples",
        shared: 3,
        matrix: false,
        per_owner: false,
        owner_clear: 0,
    },
    KindRow {
        name: "bits",
        shared: 1,
        matrix: false,
        per_owner: false,
        owner_clear: 0,
    },
    KindRow {
        name: "randoms",
        shared: 1,
        matrix: false,
        per_owner: false,
        owner_clear: 0,
    },
    KindRow {
        name: "input-masks",
        shared: 1,
        matrix: false,
        per_owner: true,
        owner_clear: 1,
    },
    KindRow {
        name: "matrix-triples",
        shared: 3,
        matrix: true,
        per_owner: false,
        owner_clear: 0,
    },
];

impl Kind {
    /// This kind's row of [`KINDS`].
    ///
    /// ```
    /// use coterie_spdz::Kind;
    /// assert_eq!(Kind::Triples.row().shared, 3);
    /// assert_eq!(Kind::MatrixTriples(4).shared_per_item(), 3 * 16);
    /// assert_eq!(Kind::InputMasks(2).to_string(), "input-masks-2");
    /// ```
    pub fn row(&self) -> &'static KindRow {
        &KINDS[match self {
            Kind::Triples => 0,
            Kind::Bits => 1,
            Kind::Randoms => 2,
            Kind::InputMasks(_) => 3,
            Kind::MatrixTriples(_) => 4,
        }]
    }

    /// The kind's parameter: the owner of input masks, `d` of matrix triples.
    pub fn param(&self) -> Option<usize> {
        match self {
            Kind::InputMasks(p) => Some(*p),
            Kind::MatrixTriples(d) => Some(*d),
            _ => None,
        }
    }

    /// Shared elements (each a value share and a MAC share) in one item.
    pub fn shared_per_item(&self) -> usize {
        let row = self.row();
        match (row.matrix, self.param()) {
            (true, Some(d)) => row.shared.saturating_mul(d.saturating_mul(d)),
            _ => row.shared,
        }
    }

    /// Ring elements one item takes for `party` (on disk): two per shared element, plus the
    /// owner's clear elements when `party` owns the item.
    pub fn elems_per_item(&self, party: PartyId) -> usize {
        let row = self.row();
        let own = if row.per_owner && self.param() == Some(party) {
            row.owner_clear
        } else {
            0
        };
        2 * self.shared_per_item() + own
    }

    /// Checks the kind's parameter against `n` parties: an owner must be a party, a matrix
    /// dimension at least 1.
    pub fn validate(&self, n: usize) -> crate::Result<()> {
        match self {
            Kind::InputMasks(o) if *o >= n => {
                Err(crate::Error::Invalid(format!("no party {o} of {n}")))
            }
            Kind::MatrixTriples(0) => Err(crate::Error::Invalid(
                "matrix triples need a dimension d ≥ 1".into(),
            )),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.param() {
            Some(p) => write!(f, "{}-{p}", self.row().name),
            None => f.write_str(self.row().name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_variants() {
        let all = [
            Kind::Triples,
            Kind::Bits,
            Kind::Randoms,
            Kind::InputMasks(1),
            Kind::MatrixTriples(3),
        ];
        let names: Vec<String> = all.iter().map(|k| k.to_string()).collect();
        assert_eq!(
            names,
            [
                "triples",
                "bits",
                "randoms",
                "input-masks-1",
                "matrix-triples-3"
            ]
        );
        assert_eq!(
            all.iter().map(|k| k.elems_per_item(1)).collect::<Vec<_>>(),
            [6, 2, 2, 3, 54]
        );
        assert_eq!(Kind::InputMasks(1).elems_per_item(0), 2);
        assert!(Kind::InputMasks(3).validate(3).is_err());
        assert!(Kind::MatrixTriples(0).validate(3).is_err());
        assert!(Kind::MatrixTriples(1).validate(3).is_ok());
    }
}
