//! Roles from the party config through to a connected TLS mesh; a party that holds the same
//! config with other roles is refused.

use std::path::PathBuf;
use std::time::Duration;

use coterie_net::certs::{free_loopback_addresses, generate_pki, write_pki, write_pki_with_roles};
use coterie_net::{Mesh, MeshOptions, Role, Roster, TlsMesh};

fn tmp(name: &str) -> PathBuf {
    coterie_base::fsio::unique_temp_dir(&format!("coterie-net-roles-{name}"))
}

fn opts() -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_secs(10),
        connect_deadline: Duration::from_secs(3),
        ..MeshOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_reach_the_mesh_and_must_agree() {
    let pki = generate_pki(3).unwrap();
    let addrs = free_loopback_addresses(3).unwrap();
    let roles = [Role::Server, Role::Server, Role::Custom("auditor".into())];
    let dir = tmp("agree");
    let config = write_pki_with_roles(&dir, &pki, &addrs, &roles).unwrap();
    let roster = Roster::load(&config).unwrap();
    assert_eq!(roster.roles, roles.to_vec());
    let mut hs = Vec::new();
    for i in 0..3 {
        let c = config.clone();
        hs.push(tokio::spawn(async move {
            let mut m = TlsMesh::connect_with_config(&c, i, None, None, opts()).await?;
            let servers = m.parties_with_role(&Role::Server);
            let r = m.role(i).clone();
            let all: Vec<String> = m.exchange_all(&r.to_string()).await?;
            m.close().await?;
            Ok::<_, coterie_net::Error>((servers, all))
        }));
    }
    for h in hs {
        let (servers, all) = h.await.unwrap().unwrap();
        assert_eq!(servers, vec![0, 1]);
        assert_eq!(all, vec!["server", "server", "auditor"]);
    }

    // a config without roles still loads: every party a node
    let plain_dir = tmp("plain");
    let plain = write_pki(&plain_dir, &pki, &addrs).unwrap();
    assert!(!std::fs::read_to_string(&plain).unwrap().contains("role"));
    let r = Roster::load(&plain).unwrap();
    assert_eq!(r.parties_with_role(&Role::Node), vec![0, 1, 2]);
    assert!(r.parties_with_role(&Role::Server).is_empty());

    // party 1 holds the same parties with other roles: the others refuse it
    let other_dir = tmp("other");
    let other = write_pki_with_roles(&other_dir, &pki, &addrs, &[Role::Client]).unwrap();
    let mut hs = Vec::new();
    for i in 0..2 {
        let c = if i == 1 {
            other.clone()
        } else {
            config.clone()
        };
        hs.push(tokio::spawn(async move {
            TlsMesh::connect_with_config(&c, i, None, None, opts())
                .await
                .map(|_| ())
        }));
    }
    for h in hs {
        assert!(h.await.unwrap().is_err());
    }
    // the directories this test wrote (each `tmp` call names a new one)
    for d in [&dir, &plain_dir, &other_dir] {
        let _ = std::fs::remove_dir_all(d);
    }
}
