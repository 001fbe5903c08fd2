//! The `locksim` command: see the `locksim::cli` module.

fn main() {
    std::process::exit(locksim::cli::main());
}
