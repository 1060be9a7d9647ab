//! The command line. Doc comments are the help text.

use crate::Keep;
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

/// Runs a command and gives the GPU ISA of every Intel GPU kernel it
/// launched through Level Zero, each matched to the exact file IGC compiled.
///
/// The command runs with the xpu-asm interposer preloaded and IGC's shader
/// dumps switched on; its standard input, output and error pass through
/// untouched, and xpu-asm-run exits with its exit status (128+N when signal
/// N ended it). Then every launched kernel is matched, by its exact name
/// and its module's SPIR-V, to the `.asm` IGC wrote for it, and a table
/// (or, with --json, the JSON report) is printed on stdout.
///
/// The capture folder keeps report.json, a copy of each launched kernel's
/// ISA under asm/, the records and the dumps; `xpu-asm-run collect DIR`
/// reports on it again.
#[derive(Debug, Parser)]
#[command(
    name = "xpu-asm-run",
    version,
    override_usage = "xpu-asm-run [OPTIONS] -- <COMMAND>...\n       xpu-asm-run collect [OPTIONS] <DIR>",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    disable_help_subcommand = true,
    after_long_help = "\
Examples:
  xpu-asm-run -- ./my_app --size 1024
  xpu-asm-run -o run1 -- python train.py
  xpu-asm-run --emulate pvc -o pvc-isa -- ./my_sycl_app
  xpu-asm-run collect run1 --filter gemm --json

Exit status: the command's (128+N when signal N ended it); 127 when the
command cannot be started (126 when it is not executable); 2 when
xpu-asm-run refuses to start (bad option, output folder, missing
interposer)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub sub: Option<Sub>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Match and report again on an existing capture folder, without running
    /// anything.
    Collect(CollectArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Capture folder [default: ./xpu-asm-<command>-<YYYYmmdd-HHMMSS>]
    ///
    /// It must not exist, or be empty. An earlier capture (a folder with
    /// records/, run.json or report.json) is reused only with --force; any other
    /// non-empty folder is refused.
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Reuse the earlier capture given with -o: its records/, dumps/, asm/,
    /// run.json, report.json and collect.json are deleted first (other
    /// files are left alone).
    #[arg(long)]
    pub force: bool,

    /// The interposer library (libxpu_asm_interposer.so)
    ///
    /// Without it: $XPU_ASM_INTERPOSER, then next to the xpu-asm-run
    /// executable, then ../lib from there.
    #[arg(long, value_name = "PATH")]
    pub interposer: Option<PathBuf>,

    /// Compile for DEVICE (pvc, dg2, ...) without that GPU; kernels do NOT run
    ///
    /// Sets NEO's no-hardware variables, so that the program JIT-compiles
    /// its kernels for DEVICE on a machine without it. Kernels do NOT
    /// execute in this mode: their results are garbage and the program may
    /// misbehave if it checks them. It suits capturing ISA, not results.
    #[arg(long, value_name = "DEVICE", value_parser = parse_device)]
    pub emulate: Option<String>,

    /// Where kernels' ISA comes from
    ///
    /// dump (default): IGC's .asm dumps of this run's compilations (the
    /// richest text: vISA header, source lines of -g builds), and for every
    /// kernel they lack (native modules, cache hits) IGA's disassembly of
    /// the module's binary, which is always saved. binary: no IGC dumps at
    /// all (faster: no dump cost at compile time, no dump files); every
    /// kernel's ISA is disassembled from its module's binary, and NEO's and
    /// SYCL's persistent caches are left as the user set them.
    #[arg(long, value_enum, value_name = "FROM", default_value_t = IsaMode::Dump)]
    pub isa: IsaMode,

    #[command(flatten)]
    pub report: ReportArgs,

    /// The command to run and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// `--isa`: where kernels' ISA comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum IsaMode {
    /// IGC's dumps first, module binaries for what they lack.
    #[default]
    Dump,
    /// Module binaries only; IGC dumps nothing.
    Binary,
}

#[derive(Debug, Args)]
pub struct CollectArgs {
    /// The capture folder an earlier `xpu-asm-run -o DIR` wrote
    pub dir: PathBuf,

    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Print the JSON report (as written to DIR/report.json) instead of the table
    #[arg(long)]
    pub json: bool,

    /// Print nothing but errors (DIR/report.json is still written)
    #[arg(short, long)]
    pub quiet: bool,

    /// Also list the kernels IGC compiled that were never launched
    #[arg(long)]
    pub all: bool,

    /// List only kernels whose name (mangled or demangled) matches REGEX
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub filter: Option<regex::Regex>,

    /// Which IGC dump files to keep after matching
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = Keep::Asm)]
    pub keep: Keep,
}

fn parse_regex(s: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(s).map_err(|e| format!("invalid regular expression: {e}"))
}

fn parse_device(s: &str) -> Result<String, String> {
    if !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(s.to_string())
    } else {
        Err(
            "expected a device name such as pvc, dg2 or tgllp (`ocloc compile --help` lists them)"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("xpu-asm-run").chain(args.iter().copied()))
    }

    #[test]
    fn run_and_collect_forms_parse() {
        let c = parse(&["-o", "d", "--json", "--", "sh", "-c", "exit 3"]).unwrap();
        assert!(c.sub.is_none());
        assert_eq!(c.run.command, ["sh", "-c", "exit 3"]);
        assert!(c.run.report.json);

        // Options of the command stay the command's.
        let c = parse(&["--", "python", "-o", "x", "--json"]).unwrap();
        assert_eq!(c.run.command, ["python", "-o", "x", "--json"]);
        assert!(!c.run.report.json);

        let c = parse(&["collect", "d", "--all", "--keep", "launched"]).unwrap();
        match c.sub {
            Some(Sub::Collect(a)) => {
                assert_eq!(a.dir, PathBuf::from("d"));
                assert!(a.report.all);
                assert_eq!(a.report.keep, Keep::Launched);
            }
            None => panic!("collect not parsed"),
        }

        // A command named `collect` runs after `--`.
        let c = parse(&["--", "collect", "d"]).unwrap();
        assert!(c.sub.is_none());
        assert_eq!(c.run.command, ["collect", "d"]);
    }

    #[test]
    fn bad_input_is_refused_before_anything_runs() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["sh"]).is_err());
        assert!(parse(&["--filter", "(", "--", "true"]).is_err());
        assert!(parse(&["--emulate", "../x", "--", "true"]).is_err());
        assert!(parse(&["--keep", "some", "--", "true"]).is_err());
        assert!(parse(&["--isa", "dumps-and-more", "--", "true"]).is_err());
        assert_eq!(parse(&["--", "true"]).unwrap().run.isa, IsaMode::Dump);
        assert_eq!(
            parse(&["--isa", "binary", "--", "true"]).unwrap().run.isa,
            IsaMode::Binary
        );
        let e = parse(&["--filter", "[", "--", "true"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid regular expression"), "{e}");
    }
}
