//! The project's own tasks (the `cargo xtask` pattern), run by
//! scripts/release.sh:
//!
//!   xtask docs DIR   writes DIR/doc/ (the man pages: xpu-asm-run.1 and one
//!                    per subcommand) and DIR/complete/ (bash, zsh, fish,
//!                    elvish, PowerShell)
//!
//! Both come from the command line's own definition (clap derive in
//! collector/src/commands/mod.rs), so they say what the binary accepts.

use clap::CommandFactory;
use clap_complete::Shell;
use std::path::Path;
use std::process::ExitCode;
use xpu_asm_collector::commands::Cli;

const BIN: &str = "xpu-asm-run";

/// The command line as the completions see it: without its hidden
/// subcommand (`__rebuild`, xpu-asm-run's child for the collection's
/// compiles, never typed), which clap_complete would offer, and whose `__`
/// breaks its bash script (that names each subcommand's path with `__`
/// between the parts).
fn completed() -> clap::Command {
    let full = Cli::command();
    let mut cmd = clap::Command::new(BIN)
        .version(xpu_asm_collector::commands::VERSION)
        .args_conflicts_with_subcommands(true)
        .subcommand_negates_reqs(true)
        .disable_help_subcommand(true);
    for a in full.get_arguments() {
        cmd = cmd.arg(a.clone());
    }
    cmd.subcommands(full.get_subcommands().filter(|s| !s.is_hide_set()).cloned())
}

fn docs(dir: &Path) -> std::io::Result<()> {
    let doc = dir.join("doc");
    let complete = dir.join("complete");
    std::fs::create_dir_all(&doc)?;
    std::fs::create_dir_all(&complete)?;
    // xpu-asm-run.1, and xpu-asm-run-collect.1 etc. that it refers to.
    clap_mangen::generate_to(Cli::command(), &doc)?;
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::Elvish,
        Shell::PowerShell,
    ] {
        clap_complete::generate_to(shell, &mut completed(), BIN, &complete)?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [cmd, dir] if cmd == "docs" => match docs(Path::new(dir)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xtask: docs {dir}: {e}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: xtask docs DIR  (the man page and shell completions of {BIN})");
            ExitCode::from(2)
        }
    }
}
