//! A `redis-server` started for one run (`--redis spawn`) on a free
//! loopback port, without persistence, and stopped when dropped; for a
//! cluster behind a proxy (`[sim.redis] proxy`), a one-node Redis
//! Cluster holding every slot, which answers as a proxy does: one
//! address, cross-slot keys refused with `CROSSSLOT`; for a cluster the
//! clients reach in cluster mode (`[sim.redis] shards`), a Redis Cluster
//! of that many masters, the slots split as `redis-cli --cluster create`
//! splits them (as `lockcore::shard_of` numbers them); for independent
//! masters (`[sim.redis] masters`), that many standalone servers that
//! share nothing.

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::SimError;

/// How long a started server may take to accept connections.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// Running `redis-server`s; dropping them stops them.
#[derive(Debug)]
pub(crate) struct SpawnedRedis {
    process: Process,
    /// Each master's port, in slot order in a cluster, in the order of
    /// their numbers for independent masters (one otherwise).
    ports: Vec<u16>,
}

/// What was started: plain servers (one, or the independent masters),
/// or a cluster (which stops itself and removes its directory when
/// dropped).
#[derive(Debug)]
enum Process {
    Servers(Vec<Child>),
    Cluster(
        #[expect(dead_code, reason = "held for its Drop, which stops the node")]
        fake_redis::testing::RealCluster,
    ),
}

fn failed(reason: String) -> SimError {
    SimError::Engine {
        engine: "redis".to_owned(),
        reason,
    }
}

impl SpawnedRedis {
    /// Starts `redis-server` on a free port and waits until it accepts
    /// connections.
    pub(crate) fn start() -> Result<SpawnedRedis, SimError> {
        SpawnedRedis::start_standalone(1)
    }

    /// Starts `n` standalone `redis-server`s (not cluster-enabled), each
    /// on a free port of its own, and waits until each accepts
    /// connections: the independent masters (`[sim.redis] masters`) a
    /// red lock is built over, which share nothing.
    pub(crate) fn start_standalone(n: u16) -> Result<SpawnedRedis, SimError> {
        let mut spawned = SpawnedRedis {
            process: Process::Servers(Vec::new()),
            ports: Vec::new(),
        };
        for _ in 0..n.max(1) {
            let (child, port) = start_server()?;
            if let Process::Servers(children) = &mut spawned.process {
                children.push(child);
            }
            spawned.ports.push(port);
        }
        Ok(spawned)
    }

    /// Starts a one-node Redis Cluster holding every slot (`cluster-enabled
    /// yes`, `CLUSTER ADDSLOTSRANGE 0 16383`) and waits for
    /// `cluster_state:ok`.
    pub(crate) fn start_cluster() -> Result<SpawnedRedis, SimError> {
        SpawnedRedis::start_masters(1)
    }

    /// Starts a Redis Cluster of `masters` masters (`CLUSTER ADDSLOTSRANGE`
    /// with `redis-cli --cluster create`'s split, `CLUSTER MEET`) and
    /// waits until every node reports `cluster_state:ok`.
    pub(crate) fn start_masters(masters: u16) -> Result<SpawnedRedis, SimError> {
        let cluster =
            fake_redis::testing::RealCluster::start(usize::from(masters)).map_err(|e| {
                failed(format!(
                    "cannot start a {masters}-master redis cluster: {e}"
                ))
            })?;
        let ports = cluster.addrs().iter().map(|a| a.port()).collect();
        Ok(SpawnedRedis {
            process: Process::Cluster(cluster),
            ports,
        })
    }

    /// Each master's `HOST:PORT`, as [`SpawnedRedis::ports`] orders them.
    pub(crate) fn addrs(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|port| format!("127.0.0.1:{port}"))
            .collect()
    }
}

impl Drop for SpawnedRedis {
    fn drop(&mut self) {
        if let Process::Servers(children) = &mut self.process {
            for child in children {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// Starts one `redis-server` on a free port, without persistence, and
/// waits until it accepts connections; a port found free may be taken by
/// another server before ours binds it (ours then exits, or another
/// answers), so it tries again on a new port.
fn start_server() -> Result<(Child, u16), SimError> {
    let mut tries = 0;
    loop {
        match start_server_once() {
            Err(e) if tries < 4 => {
                tries += 1;
                tracing::debug!("redis-server did not start ({e}); again on a new port");
            }
            done => return done,
        }
    }
}

fn start_server_once() -> Result<(Child, u16), SimError> {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map_err(|e| failed(format!("no free loopback port: {e}")))?
        .port();
    let mut child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            failed(format!(
                "cannot start redis-server ({e}); install it (apt-get install redis-server) or pass --redis redis://HOST:PORT"
            ))
        })?;
    match wait_ready(&mut child, port) {
        Ok(()) => Ok((child, port)),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

/// Waits until `child` accepts connections on `port`, and checks that it
/// is the process that answers there.
fn wait_ready(child: &mut Child, port: u16) -> Result<(), SimError> {
    let started = Instant::now();
    while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(failed(format!("redis-server exited at start: {status}")));
        }
        if started.elapsed() > READY_WITHIN {
            return Err(failed(format!(
                "redis-server did not accept connections on port {port} within {}s",
                READY_WITHIN.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    match fake_redis::testing::server_pid((Ipv4Addr::LOCALHOST, port).into(), None) {
        Ok(pid) if pid == child.id() => Ok(()),
        Ok(pid) => Err(failed(format!(
            "port {port} is served by process {pid}, not by the redis-server started"
        ))),
        Err(e) => Err(failed(format!("INFO server on port {port}: {e}"))),
    }
}
