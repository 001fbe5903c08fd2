//! Holds a Redisson lock on a real Redis, as a Java Redisson client would.
//!
//! ```text
//! cargo run --release -p lockcore --example hold -- \
//!     --redis redis://127.0.0.1:6379 --name NAME --hold-ms MS \
//!     [--watchdog-ms T] [--lease-ms L]
//! ```
//!
//! Acquires NAME (thread 1 of a fresh v4 uuid), prints `acquired <field>`,
//! holds it for MS milliseconds (the watchdog renewing it every T/3 when no
//! lease is given), unlocks, prints `released` and exits 0. Any error ends
//! the run with a message and exit status 1.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use lockcore::{Config, Millis, RedissonClient, RespTransport, ThreadId};

/// Hold a Redisson lock on a real Redis.
#[derive(Debug, Parser)]
struct Args {
    /// Redis url, `redis://host:port`.
    #[arg(long)]
    redis: String,
    /// The lock's name (its Redis key).
    #[arg(long)]
    name: String,
    /// How long to hold the lock, in ms.
    #[arg(long)]
    hold_ms: u64,
    /// `lockWatchdogTimeout` in ms (Redisson's default 30000).
    #[arg(long, default_value_t = 30_000)]
    watchdog_ms: u64,
    /// A lease in ms: the key expires after it and is not renewed.
    #[arg(long)]
    lease_ms: Option<u64>,
}

const THREAD: ThreadId = ThreadId(1);

async fn run(args: Args) -> Result<(), String> {
    let config = Config::builder()
        .watchdog_timeout(args.watchdog_ms)
        .build()
        .map_err(|e| e.to_string())?;
    let transport = RespTransport::connect(&args.redis)
        .await
        .map_err(|e| e.to_string())?;
    let client = RedissonClient::new(uuid::Uuid::new_v4().to_string(), config, transport);
    let lock = client.lock(args.name).map_err(|e| e.to_string())?;
    match args.lease_ms {
        Some(lease) => lock.lock_with_lease(THREAD, Millis(lease)).await,
        None => lock.lock(THREAD).await,
    }
    .map_err(|e| format!("lock failed: {e}"))?;
    println!("acquired {}", client.field(THREAD));
    tokio::time::sleep(Duration::from_millis(args.hold_ms)).await;
    lock.unlock(THREAD)
        .await
        .map_err(|e| format!("unlock failed: {e}"))?;
    println!("released");
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("hold: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hold: {e}");
            ExitCode::FAILURE
        }
    }
}
