//! A real Redis Cluster of `redis-server` processes on loopback, started
//! for a test and stopped (its directory removed) when dropped.
//!
//! Each master gets its own port (and bus port, `port + 10000`), and the
//! cluster is formed as an operator would by hand: `CLUSTER
//! SET-CONFIG-EPOCH i+1` (so epochs do not depend on gossip's collision
//! handling), `CLUSTER ADDSLOTSRANGE` with `redis-cli --cluster create`'s
//! split, `CLUSTER MEET`, then a wait until every node reports
//! `cluster_state:ok` and knows every node.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::RealRedisError;
use crate::Topology;

/// A running cluster of `redis-server` masters.
#[derive(Debug)]
pub struct RealCluster {
    children: Vec<Child>,
    ports: Vec<u16>,
    ids: Vec<String>,
    dir: PathBuf,
}

impl RealCluster {
    /// Starts `masters` masters, or panics with a message that says how
    /// to install `redis-server` (tests fail, never skip).
    pub fn start_for_test(masters: usize) -> RealCluster {
        RealCluster::start(masters).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts `masters` masters and forms the cluster.
    pub fn start(masters: usize) -> Result<RealCluster, RealRedisError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "fake-redis-cluster-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(start_error)?;
        let mut cluster = RealCluster {
            children: Vec::new(),
            ports: Vec::new(),
            ids: Vec::new(),
            dir,
        };
        for _ in 0..masters {
            cluster.spawn_node()?;
        }
        cluster.form()?;
        Ok(cluster)
    }

    /// Starts one node on a free port pair; another port when the one
    /// found free was taken by another test's server meanwhile.
    fn spawn_node(&mut self) -> Result<(), RealRedisError> {
        let mut last = String::new();
        for _ in 0..5 {
            let port = cluster_port(&self.ports)?;
            let mut child = super::spawn_redis_server(
                Command::new("redis-server")
                    .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                    .args(["--cluster-enabled", "yes"])
                    .args(["--cluster-config-file", &format!("nodes-{port}.conf")])
                    .args(["--save", "", "--appendonly", "no"])
                    .arg("--dir")
                    .arg(&self.dir),
            )?;
            match wait_own(&mut child, port) {
                Ok(()) => {
                    self.children.push(child);
                    self.ports.push(port);
                    return Ok(());
                }
                Err(e) => {
                    last = e;
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        Err(RealRedisError::Start(last))
    }

    fn form(&mut self) -> Result<(), RealRedisError> {
        let split = Topology::even_split(self.ports.len());
        for (i, range) in split.iter().enumerate() {
            let addr = self.addr(i);
            let epoch = (i + 1).to_string();
            expect_ok(addr, &["CLUSTER", "SET-CONFIG-EPOCH", &epoch])?;
            let (first, last) = (range.start().to_string(), range.end().to_string());
            expect_ok(addr, &["CLUSTER", "ADDSLOTSRANGE", &first, &last])?;
            let id = command(addr, &["CLUSTER", "MYID"]).map_err(RealRedisError::Start)?;
            self.ids.push(id);
        }
        for i in 1..self.ports.len() {
            let port = self.ports[i].to_string();
            expect_ok(self.addr(0), &["CLUSTER", "MEET", "127.0.0.1", &port])?;
        }
        let start = Instant::now();
        while !self.formed() {
            if start.elapsed() > Duration::from_secs(30) {
                return Err(RealRedisError::Start(
                    "the cluster did not reach cluster_state:ok within 30 s".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Every node is `ok`, knows every node, has its final epoch and a
    /// bus link to every peer (no `disconnected` or `handshake` node).
    fn formed(&self) -> bool {
        let n = self.ports.len();
        (0..n).all(|i| {
            let info = command(self.addr(i), &["CLUSTER", "INFO"]).is_ok_and(|info| {
                info.contains("cluster_state:ok\r\n")
                    && info.contains(&format!("cluster_known_nodes:{n}\r\n"))
                    && info.contains(&format!("cluster_current_epoch:{n}\r\n"))
            });
            info && command(self.addr(i), &["CLUSTER", "NODES"]).is_ok_and(|nodes| {
                nodes.lines().count() == n
                    && nodes
                        .lines()
                        .all(|l| l.contains(" connected") && !l.contains("handshake"))
            })
        })
    }

    /// Master `i`'s address.
    pub fn addr(&self, i: usize) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.ports[i]))
    }

    /// Every master's address, in slot order.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        (0..self.ports.len()).map(|i| self.addr(i)).collect()
    }

    /// Master `i`'s node id.
    pub fn id(&self, i: usize) -> &str {
        &self.ids[i]
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Waits until `child` answers on `port`: `Err` when it exits, does not
/// answer within 10 s, or another process answers there.
fn wait_own(child: &mut Child, port: u16) -> Result<(), String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let start = Instant::now();
    while command(addr, &["PING"]).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("node on {port} exited at start: {status}"));
        }
        if start.elapsed() > Duration::from_secs(10) {
            return Err(format!("node on {port} did not start"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    match super::server_pid(addr, None) {
        Ok(pid) if pid == child.id() => Ok(()),
        Ok(pid) => Err(format!(
            "port {port} is served by process {pid}, not the node started"
        )),
        Err(e) => Err(format!("INFO server on port {port}: {e}")),
    }
}

fn start_error(e: std::io::Error) -> RealRedisError {
    RealRedisError::Start(e.to_string())
}

/// A free port whose bus port (`+ 10000`) is free too, not in `taken`.
fn cluster_port(taken: &[u16]) -> Result<u16, RealRedisError> {
    for _ in 0..200 {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(start_error)?
            .port();
        let Some(bus) = port.checked_add(10_000) else {
            continue;
        };
        if !taken.contains(&port) && TcpListener::bind((Ipv4Addr::LOCALHOST, bus)).is_ok() {
            return Ok(port);
        }
    }
    Err(RealRedisError::Start(
        "no free port pair for a cluster node".into(),
    ))
}

fn expect_ok(addr: SocketAddr, words: &[&str]) -> Result<(), RealRedisError> {
    match command(addr, words) {
        Ok(reply) if reply == "OK" => Ok(()),
        Ok(other) => Err(RealRedisError::Start(format!("{words:?}: {other}"))),
        Err(e) => Err(RealRedisError::Start(format!("{words:?}: {e}"))),
    }
}

/// Sends one command; a simple, integer or bulk reply as text, an error
/// reply as `Err`.
fn command(addr: SocketAddr, words: &[&str]) -> Result<String, String> {
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_millis(500)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    let mut out = format!("*{}\r\n", words.len());
    for w in words {
        out.push_str(&format!("${}\r\n{w}\r\n", w.len()));
    }
    stream
        .write_all(out.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(reply) = parse(&buf)? {
            return Ok(reply);
        }
        let n = stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A complete simple, error, integer or bulk reply in `buf`, if any.
fn parse(buf: &[u8]) -> Result<Option<String>, String> {
    let Some(end) = buf.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    let line = String::from_utf8_lossy(&buf[1..end]).into_owned();
    match buf.first() {
        Some(b'+' | b':') => Ok(Some(line)),
        Some(b'-') => Err(line),
        Some(b'$') => {
            let len: usize = line
                .parse()
                .map_err(|_| format!("bad bulk length {line}"))?;
            let body = buf.get(end + 2..end + 2 + len);
            Ok(body.map(|b| String::from_utf8_lossy(b).into_owned()))
        }
        _ => Err(format!("unexpected reply {line}")),
    }
}
