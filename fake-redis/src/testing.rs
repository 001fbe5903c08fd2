//! A real `redis-server`, started for a test and stopped when dropped.
//!
//! fake-redis is proven equal to Redis by differential tests, and lockcore
//! is checked against a real server. Both start their own `redis-server` on
//! a free loopback port, with persistence off. A missing binary is an error
//! that says how to install it: such tests fail, they never skip.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use thiserror::Error;

mod cluster;
pub use cluster::RealCluster;

/// Why a real `redis-server` could not be started.
#[derive(Debug, Error)]
pub enum RealRedisError {
    /// The binary is not on `PATH`.
    #[error(
        "redis-server is not installed (not found on PATH); install it with \
         `apt-get install -y redis-server` (bash .ci/run does this), then run the tests again"
    )]
    NotInstalled,
    /// Starting or reaching it failed.
    #[error("could not start redis-server: {0}")]
    Start(String),
}

/// A `redis-server` child process on `127.0.0.1:<port>`, without persistence.
#[derive(Debug)]
pub struct RealRedis {
    child: Child,
    port: u16,
    /// A server's own directory, or a sentinel's configuration file,
    /// which it rewrites as it learns (removed on drop).
    conf: Option<std::path::PathBuf>,
    /// Its `--requirepass`, to ask it who it is.
    password: Option<String>,
}

impl RealRedis {
    /// Starts a server, or panics with a message that says how to install
    /// `redis-server`. For tests, where a missing server must fail loudly.
    pub fn start_for_test() -> RealRedis {
        match RealRedis::start() {
            Ok(server) => server,
            Err(e) => panic!("{e}"),
        }
    }

    /// Starts a server on a free port and waits until it answers `PING`.
    pub fn start() -> Result<RealRedis, RealRedisError> {
        RealRedis::start_with(&[])
    }

    /// As [`RealRedis::start_for_test`], with extra `redis-server`
    /// arguments (for example `["--requirepass", "secret"]`).
    pub fn start_for_test_with(extra: &[&str]) -> RealRedis {
        match RealRedis::start_with(extra) {
            Ok(server) => server,
            Err(e) => panic!("{e}"),
        }
    }

    /// Starts a server with extra arguments; it is ready once it answers
    /// `PING` (with `PONG`, or `NOAUTH` when a password is required).
    pub fn start_with(extra: &[&str]) -> Result<RealRedis, RealRedisError> {
        let mut last = String::new();
        // A port found free can be taken before redis binds it: try a few.
        for _ in 0..5 {
            let port = free_port().map_err(|e| RealRedisError::Start(e.to_string()))?;
            // A directory of its own, removed on drop: a server started
            // in a shared one loads the `dump.rdb` another test's replica
            // left there, and its AOF files would be shared.
            let dir = own_dir().map_err(|e| RealRedisError::Start(e.to_string()))?;
            let mut command = Command::new("redis-server");
            command
                .args(["--port", &port.to_string()])
                .args(["--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&dir)
                .args(extra);
            let password = extra
                .iter()
                .position(|a| *a == "--requirepass")
                .and_then(|i| extra.get(i + 1))
                .map(|p| (*p).to_owned());
            match RealRedis::launch(command, port, Some(dir), password)? {
                Ok(server) => return Ok(server),
                Err(e) => last = e,
            }
        }
        Err(RealRedisError::Start(last))
    }

    /// Starts `redis-server --sentinel` monitoring `127.0.0.1:<master>`
    /// as `name` (quorum 1, `down-after-milliseconds` of `down_after_ms`,
    /// a failover timeout of 10 s), or panics saying how to install
    /// redis-server. Its configuration file (a sentinel must have one it
    /// can rewrite) lives in the temporary directory until it is dropped.
    pub fn start_sentinel_for_test(name: &str, master: u16, down_after_ms: u64) -> RealRedis {
        match RealRedis::start_sentinel(name, master, down_after_ms) {
            Ok(server) => server,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`RealRedis::start_sentinel_for_test`], as a result.
    pub fn start_sentinel(
        name: &str,
        master: u16,
        down_after_ms: u64,
    ) -> Result<RealRedis, RealRedisError> {
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port().map_err(|e| RealRedisError::Start(e.to_string()))?;
            let conf = std::env::temp_dir().join(format!(
                "locksim-sentinel-{}-{port}.conf",
                std::process::id()
            ));
            let text = format!(
                "port {port}\nbind 127.0.0.1\n\
                 sentinel monitor {name} 127.0.0.1 {master} 1\n\
                 sentinel down-after-milliseconds {name} {down_after_ms}\n\
                 sentinel failover-timeout {name} 10000\n"
            );
            std::fs::write(&conf, text).map_err(|e| RealRedisError::Start(e.to_string()))?;
            let mut command = Command::new("redis-server");
            command.arg(&conf).arg("--sentinel");
            match RealRedis::launch(command, port, Some(conf), None)? {
                Ok(server) => return Ok(server),
                Err(e) => last = e,
            }
        }
        Err(RealRedisError::Start(last))
    }

    /// Spawns `command` (a server on `port`, with its configuration file
    /// `conf` if any) and waits until it answers: `Ok(Err(why))` when it
    /// did not, which another port may cure.
    fn launch(
        mut command: Command,
        port: u16,
        conf: Option<std::path::PathBuf>,
        password: Option<String>,
    ) -> Result<Result<RealRedis, String>, RealRedisError> {
        let child = match spawn_redis_server(&mut command) {
            Ok(c) => c,
            Err(e) => {
                if let Some(conf) = &conf {
                    remove(conf);
                }
                return Err(e);
            }
        };
        // Dropped on failure: killed, its file removed.
        let mut server = RealRedis {
            child,
            port,
            conf,
            password,
        };
        Ok(server.wait_ready(Duration::from_secs(10)).map(|()| server))
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("redis-server exited at start: {status}"));
            }
            if ping(self.addr()).is_ok() {
                // Another test's server may have bound the port between
                // `free_port` and this one's start (this one then exited,
                // or is about to): a test must not run against a stranger.
                return match server_pid(self.addr(), self.password.as_deref()) {
                    Ok(pid) if pid == self.child.id() => Ok(()),
                    Ok(pid) => Err(format!(
                        "port {} is served by process {pid}, not by the redis-server started ({})",
                        self.port,
                        self.child.id()
                    )),
                    Err(e) => Err(format!("INFO server on port {}: {e}", self.port)),
                };
            }
            if start.elapsed() > limit {
                return Err(format!("redis-server did not answer PING within {limit:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RealRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(conf) = &self.conf {
            remove(conf);
        }
    }
}

/// Starts `command` (a `redis-server` invocation) with its output
/// discarded; a missing binary is [`RealRedisError::NotInstalled`].
fn spawn_redis_server(command: &mut Command) -> Result<Child, RealRedisError> {
    let child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    match child {
        Ok(c) => Ok(c),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(RealRedisError::NotInstalled),
        Err(e) => Err(RealRedisError::Start(e.to_string())),
    }
}

/// A new empty directory under the temporary one, unique in this process
/// and among processes.
fn own_dir() -> std::io::Result<std::path::PathBuf> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("fake-redis-server-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Removes a server's directory or a sentinel's file.
fn remove(path: &std::path::Path) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    } else {
        let _ = std::fs::remove_file(path);
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// The process id of the `redis-server` answering on `addr` (its `INFO
/// server` `process_id`), after `AUTH` with `password` if given. A process
/// that starts a server on a port it found free calls this to know the
/// server answering is its own child.
pub fn server_pid(addr: SocketAddr, password: Option<&str>) -> std::io::Result<u32> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut out = Vec::new();
    if let Some(password) = password {
        out.extend(format!("*2\r\n$4\r\nAUTH\r\n${}\r\n{password}\r\n", password.len()).as_bytes());
    }
    out.extend(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n");
    stream.write_all(&out)?;
    // Read until the INFO text is complete: it ends with an empty line.
    let mut text = Vec::new();
    let mut chunk = [0u8; 4096];
    while !text.ends_with(b"\r\n\r\n") && text.len() < 64 * 1024 {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        text.extend(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&text);
    text.lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no process_id in the reply: {text:.120}")))
}

fn ping(addr: SocketAddr) -> std::io::Result<()> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(200))?;
    stream.set_read_timeout(Some(Duration::from_millis(500)))?;
    stream.write_all(b"*1\r\n$4\r\nPING\r\n")?;
    let mut buf = [0u8; 7];
    stream.read_exact(&mut buf)?;
    if &buf == b"+PONG\r\n" || &buf == b"-NOAUTH" {
        Ok(())
    } else {
        Err(std::io::Error::other("unexpected PING reply"))
    }
}
