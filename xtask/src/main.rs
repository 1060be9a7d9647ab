//! The project's own tasks (the `cargo xtask` pattern), run by
//! scripts/release.sh:
//!
//!   xtask docs DIR   writes DIR/doc/ (the man pages: xpu-asm-run.1 and one
//!                    per subcommand) and DIR/complete/ (bash, zsh, fish,
//!                    elvish, PowerShell)
//!
//! Both come from the command line's own definition (clap derive in
//! collector/src/commands/mod.rs), so they say what the binary accepts.

use clap::builder::PossibleValuesParser;
use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::roff::{roman, Roff};
use std::path::Path;
use std::process::ExitCode;
use xpu_asm_collector::commands::Cli;
use xpu_asm_collector::run::emulate::COMPLETED_PRODUCTS;

const BIN: &str = "xpu-asm-run";

/// The command line as the completions see it: without its hidden
/// subcommands (`__rebuild`, `__port`: xpu-asm-run's children, never
/// typed), which clap_complete would offer, and whose `__` breaks its
/// bash script (that names each subcommand's path with `__` between the
/// parts); `--emulate`, `--port-to` and `port --to` completed with the
/// products ([`COMPLETED_PRODUCTS`]) instead of file names.
fn completed() -> clap::Command {
    let full = Cli::command();
    let products = || PossibleValuesParser::new(COMPLETED_PRODUCTS);
    let mut cmd = clap::Command::new(BIN)
        .version(xpu_asm_collector::commands::VERSION)
        .args_conflicts_with_subcommands(true)
        .subcommand_negates_reqs(true)
        .disable_help_subcommand(true);
    for a in full.get_arguments() {
        let a = match a.get_id().as_str() {
            "emulate" | "port_to" => a.clone().value_parser(products()),
            _ => a.clone(),
        };
        cmd = cmd.arg(a);
    }
    cmd.subcommands(full.get_subcommands().filter(|s| !s.is_hide_set()).cloned())
        .mut_subcommand("port", |s| s.mut_arg("to", |a| a.value_parser(products())))
}

/// One argument of `cmd` as a synopsis writes it: `[-o|--out DIR]`,
/// `[--time[=WHICH]]`, `--to PRODUCTS`, `DIR`, `[KERNEL]`, `-- COMMAND...`.
fn synopsis_word(a: &clap::Arg) -> String {
    let names = a
        .get_value_names()
        .map(|v| {
            v.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
    let takes_value = a.get_num_args().is_some_and(|n| n.takes_values());
    let word = if a.is_positional() {
        let many = if a.get_num_args().is_some_and(|n| n.max_values() > 1) {
            "..."
        } else {
            ""
        };
        let dashes = if a.is_last_set() { "-- " } else { "" };
        format!("{dashes}{names}{many}")
    } else {
        let flag = match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => format!("-{s}|--{l}"),
            (None, Some(l)) => format!("--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, None) => String::new(),
        };
        match (takes_value, a.get_num_args().map(|n| n.min_values())) {
            (false, _) => flag,
            (true, Some(0)) => format!("{flag}[={names}]"),
            (true, _) => format!("{flag} {names}"),
        }
    };
    if a.is_required_set() {
        word
    } else {
        format!("[{word}]")
    }
}

/// The synopsis of `cmd` (named `name`): its options with their value
/// names, then its arguments; for xpu-asm-run itself, a line per
/// subcommand after it.
fn synopsis_lines(cmd: &clap::Command, name: &str) -> Vec<String> {
    let words: Vec<String> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .map(synopsis_word)
        .collect();
    let mut lines = vec![format!("{name} {}", words.join(" "))];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        lines.extend(synopsis_lines(sub, &format!("{name} {}", sub.get_name())));
    }
    lines
}

/// The man page of `cmd` (named `name`, its page `file`), as clap_mangen
/// renders it but for the SYNOPSIS, which says how the command is typed
/// (`-- COMMAND...`, every option with its value's name).
fn man_page(cmd: clap::Command, name: &str, file: &str) -> std::io::Result<Vec<u8>> {
    let lines = synopsis_lines(&cmd, name);
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).title(file).render(&mut page)?;
    let page = String::from_utf8_lossy(&page).into_owned();
    let mut synopsis = Roff::default();
    synopsis.control("SH", ["SYNOPSIS"]);
    for l in lines {
        synopsis.text([roman(l)]).control("br", []);
    }
    let synopsis = synopsis.render();
    let (ours, theirs, next) = (
        synopsis.find(".SH SYNOPSIS"),
        page.find(".SH SYNOPSIS"),
        page.find(".SH DESCRIPTION"),
    );
    match (ours, theirs, next) {
        (Some(o), Some(t), Some(n)) => {
            Ok(format!("{}{}{}", &page[..t], &synopsis[o..], &page[n..]).into_bytes())
        }
        _ => Err(std::io::Error::other(format!(
            "{file}: clap_mangen's page has no SYNOPSIS and DESCRIPTION to put ours between"
        ))),
    }
}

/// xpu-asm-run.1 and a page per subcommand (xpu-asm-run-collect.1, ...),
/// which the first names.
fn man_pages(doc: &Path) -> std::io::Result<()> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    for sub in subs {
        let file = format!("{BIN}-{}", sub.get_name());
        let name = format!("{BIN} {}", sub.get_name());
        std::fs::write(doc.join(format!("{file}.1")), man_page(sub, &name, &file)?)?;
    }
    let page = man_page(cmd, BIN, BIN)?;
    std::fs::write(doc.join(format!("{BIN}.1")), page)
}

fn docs(dir: &Path) -> std::io::Result<()> {
    let doc = dir.join("doc");
    let complete = dir.join("complete");
    std::fs::create_dir_all(&doc)?;
    std::fs::create_dir_all(&complete)?;
    man_pages(&doc)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// The pages and completions, written into a fresh folder.
    fn written(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("xpu-asm-xtask-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        docs(&dir).unwrap();
        dir
    }

    /// The man page's SYNOPSIS says how xpu-asm-run is typed: `--`
    /// before the command, each option with its value's name, a line per
    /// subcommand; a subcommand's page its own line.
    #[test]
    fn the_man_pages_synopsis_is_how_the_command_is_typed() {
        let dir = written("man");
        let synopsis = |page: &str| -> Vec<String> {
            let text = std::fs::read_to_string(dir.join("doc").join(page)).unwrap();
            let from = text.find(".SH SYNOPSIS\n").unwrap() + ".SH SYNOPSIS\n".len();
            let to = text.find(".SH DESCRIPTION").unwrap();
            text[from..to]
                .lines()
                .filter(|l| *l != ".br")
                .map(|l| l.replace("\\-", "-"))
                .collect()
        };
        let top = synopsis("xpu-asm-run.1");
        assert_eq!(top.len(), 6, "{top:?}");
        assert!(
            top[0].starts_with("xpu-asm-run [-o|--out DIR] [--force] [--interposer PATH] [--emulate DEVICE] [--port-to PRODUCTS] [--isa FROM] [--time[=WHICH]]")
                && top[0].ends_with(" -- COMMAND..."),
            "{top:?}"
        );
        assert!(
            top[1].starts_with("xpu-asm-run collect DIR [--json]"),
            "{top:?}"
        );
        assert!(
            top[2].starts_with("xpu-asm-run merge -o|--out OUT DIR... "),
            "{top:?}"
        );
        assert!(
            top[5].starts_with("xpu-asm-run port DIR --to PRODUCTS "),
            "{top:?}"
        );
        assert_eq!(
            synopsis("xpu-asm-run-diff.1"),
            [top[4].clone()],
            "the subcommand's page"
        );
        assert!(top
            .iter()
            .all(|l| !l.contains("subcommands") && !l.contains('<')));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// bash completes `--emulate`, `--port-to` and `port --to` with the
    /// products, a subcommand and an option as before.
    #[test]
    fn bash_completes_the_products() {
        let dir = written("bash");
        let complete = |words: &str| -> String {
            let script = format!(
                "source \"$1\"\nCOMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
                 _xpu-asm-run xpu-asm-run \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
                 echo \"${{COMPREPLY[*]}}\""
            );
            let o = Command::new("bash")
                .arg("-c")
                .arg(script)
                .arg("bash")
                .arg(dir.join("complete/xpu-asm-run.bash"))
                .current_dir(&dir)
                .output()
                .unwrap();
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        };
        let all = COMPLETED_PRODUCTS.join(" ");
        assert_eq!(complete("xpu-asm-run --emulate ''"), all);
        assert_eq!(complete("xpu-asm-run --emulate p"), "pvc ptl");
        assert_eq!(complete("xpu-asm-run --port-to ''"), all);
        assert_eq!(complete("xpu-asm-run port d --to ''"), all);
        assert_eq!(complete("xpu-asm-run co"), "collect");
        assert_eq!(complete("xpu-asm-run --em"), "--emulate");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
