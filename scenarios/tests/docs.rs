//! The documentation's examples, run.
//!
//! Every ```` ```console ```` block in the README and in the user guide
//! (`docs/src/*.md`) is a command and its output: trycmd runs each `$ `
//! line against the `locksim` binary built for this test and compares what
//! it prints (stdout then stderr) and its exit code (`? N`, success when
//! absent) with the block, failing with a diff. locksim's runs are
//! deterministic by seed, so the blocks show real output, not a sketch of
//! it; a change that alters a timeline, a verdict or a message fails here
//! until the documentation says the new thing. Commands whose output
//! depends on the machine (wall times, versions) sit in ```` ```sh ````
//! blocks, which trycmd does not run.
//!
//! A page's commands run in `<page>.in/` beside it when that directory
//! exists (the scenario files the guide runs live there), else in this
//! crate's directory. `TRYCMD=overwrite cargo test -p locksim --test docs`
//! rewrites the blocks after an intended change: read the diff.

#[test]
fn docs() {
    trycmd::TestCases::new()
        .register_bin(
            "locksim",
            std::path::Path::new(env!("CARGO_BIN_EXE_locksim")),
        )
        .case("../README.md")
        .case("../docs/src/*.md");
}
