//! A loopback address of its own for each process pod, so two pods can listen on the same port
//! as two real pods can, and for each LoadBalancer Service, so it keeps its Service's ports. On
//! Linux all of 127.0.0.0/8 reaches the machine itself and any of it can be bound without
//! privileges; where only 127.0.0.1 can be (macOS), every pod shares it.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::{Mutex, OnceLock};

use rand::Rng;

/// Addresses held by live pods of every cluster in this process (several simulators may run in
/// one process, as tests do).
static TAKEN: Mutex<Option<HashSet<Ipv4Addr>>> = Mutex::new(None);

/// An address no other live pod of this process holds: 127.X.Y.Z with X from 1 (127.0.0.0/16,
/// where 127.0.0.1 lives, is left to the machine's own services) and Z from 2.
pub fn take() -> IpAddr {
    if !per_pod_addresses() {
        return IpAddr::V4(Ipv4Addr::LOCALHOST);
    }
    let mut taken = TAKEN.lock().unwrap_or_else(|p| p.into_inner());
    let taken = taken.get_or_insert_with(HashSet::new);
    let mut rng = rand::rng();
    loop {
        let candidate = Ipv4Addr::new(
            127,
            rng.random_range(1..=254),
            rng.random(),
            rng.random_range(2..=254),
        );
        if taken.insert(candidate) {
            return IpAddr::V4(candidate);
        }
    }
}

/// The pod is gone: its address may be given again.
pub fn give_back(ip: IpAddr) {
    if let IpAddr::V4(v4) = ip
        && let Some(taken) = TAKEN.lock().unwrap_or_else(|p| p.into_inner()).as_mut()
    {
        taken.remove(&v4);
    }
}

/// Whether this machine lets a process bind loopback addresses besides 127.0.0.1 (asked once).
pub fn per_pod_addresses() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| TcpListener::bind((Ipv4Addr::new(127, 254, 254, 254), 0)).is_ok())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn two_pods_get_two_loopback_addresses_that_both_bind_the_same_port() {
        let (a, b) = (take(), take());
        assert!(a.is_loopback() && b.is_loopback());
        if !per_pod_addresses() {
            return;
        }
        assert_ne!(a, b);
        let first = TcpListener::bind((a, 0)).unwrap();
        let port = first.local_addr().unwrap().port();
        let second = TcpListener::bind((b, port)).unwrap();
        assert_eq!(second.local_addr().unwrap().ip(), b);
        give_back(a);
        give_back(b);
    }
}
