//! The project's own tasks (the `cargo xtask` pattern), run by
//! scripts/release.sh:
//!
//!   xtask docs DIR   writes DIR/doc/xpu-asm-run.1 (the man page) and
//!                    DIR/complete/ (bash, zsh, fish, elvish, PowerShell)
//!
//! Both come from the command line's own definition (clap derive in
//! collector/src/cli.rs), so they say what the binary accepts.

use clap::CommandFactory;
use clap_complete::Shell;
use std::path::Path;
use std::process::ExitCode;
use xpu_asm_collector::cli::Cli;

const BIN: &str = "xpu-asm-run";

fn docs(dir: &Path) -> std::io::Result<()> {
    let doc = dir.join("doc");
    let complete = dir.join("complete");
    std::fs::create_dir_all(&doc)?;
    std::fs::create_dir_all(&complete)?;
    let mut man = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut man)?;
    std::fs::write(doc.join(format!("{BIN}.1")), man)?;
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::Elvish,
        Shell::PowerShell,
    ] {
        clap_complete::generate_to(shell, &mut Cli::command(), BIN, &complete)?;
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
