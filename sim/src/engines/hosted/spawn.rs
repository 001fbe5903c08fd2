//! A `redis-server` started for one run (`--redis spawn`) on a free
//! loopback port, without persistence, and stopped when dropped; for a
//! cluster behind a proxy (`[sim.redis] proxy`), a one-node Redis
//! Cluster holding every slot, which answers as a proxy does: one
//! address, cross-slot keys refused with `CROSSSLOT`; for a cluster the
//! clients reach in cluster mode (`[sim.redis] shards`), a Redis Cluster
//! of that many masters, the slots split as `redis-cli --cluster create`
//! splits them (as `lockcore::shard_of` numbers them).

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::SimError;

/// How long a started server may take to accept connections.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// A running `redis-server`; dropping it stops it.
#[derive(Debug)]
pub(crate) struct SpawnedRedis {
    process: Process,
    /// Each master's port, in slot order (one outside a cluster).
    ports: Vec<u16>,
}

/// What was started: a plain server, or a cluster's one node (which
/// stops itself and removes its directory when dropped).
#[derive(Debug)]
enum Process {
    Server(Child),
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
        // A port found free may be taken by another server before ours
        // binds it (ours then exits, or another answers): a new port.
        let mut tries = 0;
        loop {
            match SpawnedRedis::start_once() {
                Err(e) if tries < 4 => {
                    tries += 1;
                    tracing::debug!("redis-server did not start ({e}); again on a new port");
                }
                done => return done,
            }
        }
    }

    fn start_once() -> Result<SpawnedRedis, SimError> {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| failed(format!("no free loopback port: {e}")))?
            .port();
        let child = Command::new("redis-server")
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
        let mut server = SpawnedRedis {
            process: Process::Server(child),
            ports: vec![port],
        };
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Process::Server(child) = &mut server.process
                && let Ok(Some(status)) = child.try_wait()
            {
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
            Ok(pid) if Some(pid) == server.pid() => Ok(server),
            Ok(pid) => Err(failed(format!(
                "port {port} is served by process {pid}, not by the redis-server started"
            ))),
            Err(e) => Err(failed(format!("INFO server on port {port}: {e}"))),
        }
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

    fn pid(&self) -> Option<u32> {
        match &self.process {
            Process::Server(child) => Some(child.id()),
            Process::Cluster(_) => None,
        }
    }

    /// Each master's `HOST:PORT`, in slot order (the server's alone
    /// outside a cluster).
    pub(crate) fn addrs(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|port| format!("127.0.0.1:{port}"))
            .collect()
    }
}

impl Drop for SpawnedRedis {
    fn drop(&mut self) {
        if let Process::Server(child) = &mut self.process {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
