//! Named roles of parties.
//!
//! A full mesh of equals needs no roles; the newer systems have users, proxies, servers that never
//! talk to each other, receivers and clients. A role is a name attached to a party in the party
//! config (`role = "proxy"`) and carried in the [`crate::Roster`]; a party without one is a
//! [`Role::Node`], so configs written before roles existed load unchanged, every party an equal.
//! Roles say what a party is for; they grant nothing by themselves (authentication stays with the
//! certificates).
//!
//! ```
//! use coterie_net::Role;
//! let r: Role = "proxy".parse().unwrap();
//! assert_eq!(r, Role::Proxy);
//! assert_eq!("auditor".parse::<Role>().unwrap(), Role::Custom("auditor".into()));
//! assert_eq!(Role::Custom("auditor".into()).to_string(), "auditor");
//! assert!("Bad Name".parse::<Role>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{Error, PartyId};

/// Longest role name accepted.
pub const MAX_ROLE_LEN: usize = 64;

/// What a party is for. Written in configs as its lowercase name; [`Role::Custom`] holds any other
/// name (lowercase ASCII letters, digits, `-` and `_`, at most [`MAX_ROLE_LEN`] bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Role {
    /// An equal party of a full mesh (the default).
    #[default]
    Node,
    /// A user who owns data or keys.
    User,
    /// A proxy (e.g. a re-encryption proxy).
    Proxy,
    /// A server that accepts clients.
    Server,
    /// A receiver of results.
    Receiver,
    /// A client of servers.
    Client,
    /// Any other role.
    Custom(String),
}

const NAMED: [(Role, &str); 6] = [
    (Role::Node, "node"),
    (Role::User, "user"),
    (Role::Proxy, "proxy"),
    (Role::Server, "server"),
    (Role::Receiver, "receiver"),
    (Role::Client, "client"),
];

impl Role {
    /// The role's name as written in configs.
    pub fn as_str(&self) -> &str {
        match self {
            Role::Custom(s) => s,
            r => NAMED
                .iter()
                .find(|(n, _)| n == r)
                .map_or("node", |(_, s)| s),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        if let Some((r, _)) = NAMED.iter().find(|(_, n)| *n == s) {
            return Ok(r.clone());
        }
        let ok = !s.is_empty()
            && s.len() <= MAX_ROLE_LEN
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !ok {
            return Err(Error::Config(format!(
                "role {:?}: lowercase letters, digits, '-' and '_' only, at most {MAX_ROLE_LEN} bytes",
                s.chars().take(MAX_ROLE_LEN).collect::<String>()
            )));
        }
        Ok(Role::Custom(s.to_string()))
    }
}

impl TryFrom<String> for Role {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
        s.parse()
    }
}

impl From<Role> for String {
    fn from(r: Role) -> String {
        match r {
            Role::Custom(s) => s,
            r => r.as_str().to_string(),
        }
    }
}

/// Parses a comma-separated list of roles (`"user,proxy,server"`), as a command line gives it.
pub fn parse_roles(list: &str) -> Result<Vec<Role>, Error> {
    list.split(',').map(|s| s.trim().parse()).collect()
}

/// The role of party `id` in `roles`; a party past the end of the list is a [`Role::Node`].
pub fn role_of(roles: &[Role], id: PartyId) -> &Role {
    static NODE: Role = Role::Node;
    roles.get(id).unwrap_or(&NODE)
}

/// The parties of `n` whose role is `role`, in id order (parties past the end of `roles` are
/// [`Role::Node`]).
pub fn parties_with_role(roles: &[Role], n: usize, role: &Role) -> Vec<PartyId> {
    (0..n).filter(|&i| role_of(roles, i) == role).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_names_are_refused() {
        for (r, s) in NAMED.iter() {
            assert_eq!(r.as_str(), *s);
            assert_eq!(s.parse::<Role>().unwrap(), *r);
            assert_eq!(String::from(r.clone()), *s);
        }
        let c: Role = "key-holder_2".parse().unwrap();
        assert_eq!(c, Role::Custom("key-holder_2".into()));
        for bad in ["", "Proxy", "a b", "é", &"x".repeat(MAX_ROLE_LEN + 1)] {
            assert!(bad.parse::<Role>().is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_roles("user, proxy,server").unwrap(),
            vec![Role::User, Role::Proxy, Role::Server]
        );
        assert!(parse_roles("user,,proxy").is_err());
    }

    #[test]
    fn missing_roles_are_nodes() {
        let roles = [Role::Server, Role::Node, Role::Server];
        assert_eq!(parties_with_role(&roles, 5, &Role::Server), vec![0, 2]);
        assert_eq!(parties_with_role(&roles, 5, &Role::Node), vec![1, 3, 4]);
        assert_eq!(parties_with_role(&[], 3, &Role::Node), vec![0, 1, 2]);
        assert_eq!(role_of(&roles, 9), &Role::Node);
    }
}
