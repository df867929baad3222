//! The public authentication step: turn this party's plain additive shares into authenticated
//! shares under an already-shared MAC key, for producers (HE- or HSS-based) that make
//! unauthenticated shares.
//!
//! Two [`Authenticator`]s:
//!
//! * [`crate::OtPrep`] (over `Z_{2^k}`): COPE with every peer under the producer's own MAC key,
//!   then SPDZ_2k's authentication check (see [`crate::OtPrep::authenticate`]);
//! * [`Engine`] (any ring, any [`Preprocessing`]): authentication by masking with preprocessed
//!   random values `[r]` under the engine's MAC key: every party broadcasts `x_i − r_i`, an echo
//!   round makes sure all saw the same values, and `[x] = [r] + (x − r)`. The opened `x − r` is
//!   uniform (it is masked by the uniform `r`), so nothing about `x` leaks; one random value per
//!   authenticated value.
//!
//! Neither step makes `x` correct: a party may change its share `x_i` as it likes, as it could
//! in the producer that made it. The producer's own check (a sacrifice of triples, say) is what
//! binds the values; the authentication only makes sure that whatever the parties' shares sum to
//! carries a valid MAC.

use std::future::Future;

use coterie_net::Mesh;

use crate::Result;
use crate::engine::Engine;
use crate::ot_prep::OtPrep;
use crate::prep::{Preprocessing, Share};
use crate::ring::{Ring, Z2k};

/// Authenticates additive shares under a MAC key the parties already share (see the module
/// docs). Every party calls [`Authenticator::authenticate`] with its own shares of the same
/// number of values.
pub trait Authenticator<R: Ring>: Send {
    /// This party's share of the MAC key the results are authenticated under.
    fn mac_key_share(&self) -> R::Elem;
    /// This party's shares `xs` (share-ring elements) as authenticated shares.
    fn authenticate<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[R::Elem],
    ) -> impl Future<Output = Result<Vec<Share<R::Elem>>>> + Send;
}

impl Authenticator<Z2k> for OtPrep {
    fn mac_key_share(&self) -> u128 {
        OtPrep::mac_key_share(self)
    }
    async fn authenticate<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[u128],
    ) -> Result<Vec<Share<u128>>> {
        OtPrep::authenticate(self, mesh, xs).await
    }
}

impl<R: Ring, P: Preprocessing<R>> Authenticator<R> for Engine<R, P> {
    fn mac_key_share(&self) -> R::Elem {
        self.prep_ref().mac_key_share()
    }
    async fn authenticate<M: Mesh>(
        &mut self,
        mesh: &mut M,
        xs: &[R::Elem],
    ) -> Result<Vec<Share<R::Elem>>> {
        self.authenticate_shares(mesh, xs).await
    }
}
