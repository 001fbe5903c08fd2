//! The `fake-redis` binary: the fake Redis over TCP, on the wall clock.
//!
//! ```text
//! fake-redis --port 6380            # then: redis-cli -p 6380
//! fake-redis --port 6380 --bind 0.0.0.0
//! fake-redis --port 6380 --requirepass secret   # AUTH / HELLO 3 AUTH needed
//! ```

use std::net::IpAddr;
use std::sync::Arc;

use clap::Parser;
use fake_redis::{Engine, SharedEngine, SystemClock, serve};

/// Serve an in-process Redis 7 (strings, hashes, expiry, pub/sub and the
/// Redisson lock scripts) over RESP2/RESP3.
#[derive(Debug, Parser)]
#[command(name = "fake-redis", version)]
struct Args {
    /// TCP port to listen on.
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Require `AUTH <password>` (or `HELLO 3 AUTH default <password>`)
    /// before other commands, as Redis's `requirepass`.
    #[arg(long)]
    requirepass: Option<String>,
}

/// Keys and values are owned copies, so a `SET` allocates and an
/// overwrite frees: with mimalloc `redis-benchmark -P 16` runs about 5%
/// faster than with glibc's malloc (RSS with 864,000 keys: 109.5 MiB,
/// redis-server 106.5).
#[global_allocator]
static ALLOCATOR: fake_redis::Allocator = fake_redis::Allocator;

/// One thread, as Redis: every command runs under the engine's one lock
/// anyway, so more worker threads only add contention and cross-thread
/// wake-ups (`redis-benchmark -c 50 -n 1000000 -P 16`, 2 cores shared
/// with it: SET and GET went from 0.96 and 1.00 to 1.13 and 1.19 million
/// requests per second with one thread).
#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let listener = match tokio::net::TcpListener::bind((args.bind, args.port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "fake-redis: cannot listen on {}:{}: {e}",
                args.bind, args.port
            );
            return std::process::ExitCode::FAILURE;
        }
    };
    tracing::info!("fake-redis listening on {}:{}", args.bind, args.port);
    let engine = match &args.requirepass {
        Some(password) => Engine::with_password(Arc::new(SystemClock), password),
        None => Engine::new(Arc::new(SystemClock)),
    };
    serve(listener, SharedEngine::new(engine)).await;
    std::process::ExitCode::SUCCESS
}
