//! The commands of `xpu-asm-run`, one file each: [`run`] (`-- CMD`),
//! [`collect`], [`merge`], [`show`], [`diff`]; what they print on a
//! terminal ([`terminal`]); a capture read back ([`read`]); and here, the command line they are given.
//! Doc comments are the help text.

pub mod collect;
pub mod diff;
pub mod merge;
pub mod port;
pub mod read;
pub mod run;
pub mod show;
pub mod terminal;

use crate::prune::Keep;
use crate::report::export::html::DEFAULT_PAGE_KERNELS;
use crate::report::export::table::Sort;
use crate::report::files::DEFAULT_ASM_COPIES;
use crate::report::Limit;
use clap::{Args, Parser, Subcommand};
use diff::gate::{self, parse_conditions, FailOn};
use std::ffi::OsString;
use std::path::PathBuf;

/// `--version`: the version and the commit built from (collector/build.rs).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("XPU_ASM_COMMIT"),
    ")"
);

/// Runs a command and gives the GPU ISA of every Intel GPU kernel it
/// launched through Level Zero or OpenCL, each matched to its exact ISA.
///
/// The command runs with the xpu-asm interposer preloaded and IGC's shader
/// dumps switched on (not with --isa binary); its standard input, output
/// and error pass through untouched, and xpu-asm-run exits with its exit
/// status (128+N when signal N ended it). Then every launched kernel is
/// matched, by its exact name and its module, to the `.asm` IGC wrote for
/// it, or else to IGA's disassembly of the module binary the driver ran
/// (ahead-of-time builds, generated kernels, persistent caches), and a
/// table (or, with --json, the JSON report) is printed on stdout.
///
/// The capture folder keeps report.json, a copy of each launched kernel's
/// ISA under asm/, the records and the dumps; `xpu-asm-run collect DIR`
/// reports on it again.
///
/// Started by a job launcher as one instance per rank (`mpirun -np N
/// xpu-asm-run -o DIR -- app`, also mpiexec, srun), the instances share DIR
/// and the last rank to end prints the one report of every rank.
#[derive(Debug, Parser)]
#[command(
    name = "xpu-asm-run",
    version = VERSION,
    override_usage = "xpu-asm-run [OPTIONS] -- <COMMAND>...\n       xpu-asm-run collect [OPTIONS] <DIR>\n       xpu-asm-run merge -o <OUT> [OPTIONS] <DIR>...\n       xpu-asm-run show [OPTIONS] <DIR> <KERNEL|--name NAME|--name-hex HEX>\n       xpu-asm-run diff [OPTIONS] <A> <B> [KERNEL]\n       xpu-asm-run port [OPTIONS] <DIR> --to <PRODUCTS>",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_long_help = "\
Examples:
  xpu-asm-run -- ./my_app --size 1024
  xpu-asm-run -o run1 -- python train.py
  xpu-asm-run --emulate pvc -o pvc-isa -- ./my_sycl_app
  xpu-asm-run collect run1 --filter gemm --json
  mpirun -np 4 xpu-asm-run -o run2 -- ./my_mpi_app
  xpu-asm-run merge -o all node1-cap node2-cap
  xpu-asm-run show run1 gemm --lines
  xpu-asm-run diff before after --fail-on spill,instructions+5%
  xpu-asm-run port run1 --to dg2,bmg,ptl --fail-on spill

Exit status: the command's (128+N when signal N ended it); 127 when the
command cannot be started (126 when it is not executable); 2 when
xpu-asm-run refuses to start (bad option, output folder, missing
interposer). collect and merge: 0, 1 on error, 130 when interrupted. show:
0, or 1 on error. diff and port: 0, 1 when a --fail-on condition holds, 2
on error; port: 3 when a launched kernel could not be ported (and no
condition holds). A bad option or argument: 2."
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
    ///
    /// Exit status: 0; 1 on error (no such folder, not a capture); 130 when
    /// interrupted.
    Collect(CollectArgs),
    /// Make one capture of several (node-local folders of one job, separate
    /// runs), then report on it
    ///
    /// Records, IGC dumps, rank files and what earlier collections saved are
    /// copied (hard links where possible) into the new folder OUT; a name
    /// already taken by different content gets a `~N` suffix (N: the input's
    /// position), the same file given twice is kept once. `collect OUT`
    /// reports on it again.
    ///
    /// Exit status: 0; 1 on error (an input that is no capture, OUT not
    /// empty); 130 when interrupted.
    Merge(MergeArgs),
    Show(ShowArgs),
    Diff(DiffArgs),
    Port(PortArgs),
    /// Internal: compiles a port's modules for one product (run by
    /// `port` itself, as a child process, under the interposer).
    #[command(name = "__port", hide = true)]
    PortChild(PortChildArgs),
    /// Internal: compiles the modules of a rebuild folder (run by
    /// collection itself, as a child process).
    #[command(name = "__rebuild", hide = true)]
    Rebuild(RebuildArgs),
}

#[derive(Debug, Args)]
pub struct RebuildArgs {
    /// The rebuild folder, `DIR/dumps/rebuild-...`
    pub folder: PathBuf,
}

#[derive(Debug, Args)]
pub struct PortChildArgs {
    /// The plan: the modules to compile, as JSON
    pub plan: PathBuf,
}

/// The launched kernels of a capture compiled for other GPUs: the ISA each
/// product would run
///
/// Every launched kernel's module is compiled again for each product of
/// --to, from what the program built it from (its SPIR-V, build flags and
/// specialization constants), through the stack's own Level Zero driver
/// with the product emulated (as `--emulate` does), so that NEO and IGC
/// compile it as a run of the program on that product would. Each
/// product's result is a capture folder, DIR/port/<product>/, with its
/// report.json (the run's launch counts), asm/ and report.html. The table
/// lists each kernel on the device of the run, then on each product, with
/// what got worse there. Kernels of native modules (built ahead of time,
/// without SPIR-V) cannot be ported: the table says so. Each kernel is
/// created by the exact bytes of its name, as the program gave them.
///
/// Exit status: 0; 1 when a --fail-on condition holds; 2 on error; 3 when
/// a launched kernel could not be ported to a product (the table says why)
/// and no --fail-on condition holds.
#[derive(Debug, Args)]
pub struct PortArgs {
    /// The capture folder (collected: it has report.json)
    pub dir: PathBuf,

    /// The products to compile for, e.g. `dg2,bmg` (any that the stack's
    /// `ocloc compile --help` lists; repeatable)
    #[arg(long, value_name = "PRODUCTS", required = true)]
    pub to: Vec<String>,

    /// Print the ports as JSON instead of the table
    #[arg(long)]
    pub json: bool,

    /// Exit with 1 when a condition holds for a kernel on a product,
    /// against the run: the conditions of `diff --fail-on` (`spill`,
    /// `FIELD+N`, `FIELD+N%`, `missing`, `any`, ...)
    #[arg(long, value_name = "CONDITIONS", value_parser = parse_fail_on, long_help = gate::help("port"))]
    pub fail_on: Option<FailOn>,

    /// Compiles at most this many at once, over all products [default:
    /// the cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// The interposer library to preload into the compiles
    #[arg(long, value_name = "PATH")]
    pub interposer: Option<PathBuf>,

    /// Print nothing but the table
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The new capture folder (must not exist, or be empty)
    #[arg(short, long, value_name = "OUT", required = true)]
    pub out: PathBuf,

    /// The capture folders to bring together
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// When to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Color {
    /// On a terminal, unless NO_COLOR is set
    #[default]
    Auto,
    Always,
    Never,
}

/// One kernel of a capture: its header figures, instruction mix and ISA,
/// interleaved with its source lines when it was built with line
/// information (-g), like `objdump -S`.
///
/// Exit status: 0; 1 on error (not a capture, no such kernel, a name that
/// several kernels have).
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The capture folder (with its report.json)
    pub dir: PathBuf,

    /// The kernel: its rank number in the report, its exact or demangled
    /// name, or a regular expression (several matches are listed); a
    /// number is a rank first: --name gives a name exactly
    #[arg(required_unless_present_any = ["name", "name_hex"])]
    pub kernel: Option<String>,

    /// The kernel whose name (as the program gave it, or demangled) is NAME
    /// exactly, whatever it looks like: `--name 1` is the kernel named 1,
    /// not rank 1, `--name ''` the kernel whose name is empty
    #[arg(long, value_name = "NAME", conflicts_with_all = ["kernel", "name_hex"])]
    pub name: Option<std::ffi::OsString>,

    /// The kernel whose name is the bytes HEX spells (report.json's
    /// `name_hex` of a name that is not UTF-8)
    #[arg(long, value_name = "HEX", conflicts_with = "kernel")]
    pub name_hex: Option<String>,

    /// Print only the kernel's source lines, ranked by the instructions
    /// each produced
    #[arg(long)]
    pub lines: bool,

    /// Print the kernel's control-flow graph: its blocks, their edges and
    /// loops as text, or with --cfg=dot as DOT for Graphviz (`| dot -Tsvg`)
    #[arg(long, value_enum, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "text", conflicts_with = "lines")]
    pub cfg: Option<CfgFormat>,

    /// Print everything about the kernel as one JSON object instead: its
    /// exact name, origin, ISA file (absolute path), header figures,
    /// launches, shapes and the evidence that it ran (docs/usage.md)
    #[arg(long, conflicts_with_all = ["lines", "cfg"])]
    pub json: bool,

    /// The order in which the kernels a regular expression matches are
    /// listed when it matches several: `launches`, `time` (with their
    /// device time, of a run with --time) or `name` [default: time with
    /// --time, else launches]
    #[arg(long, value_enum, value_name = "BY")]
    pub sort: Option<Sort>,

    /// When to colour the output
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = Color::Auto)]
    pub color: Color,
}

/// How `show --cfg` prints the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CfgFormat {
    Text,
    Dot,
}

/// Two captures side by side: per kernel (paired by name), launches, SIMD,
/// GRF, instructions, spill bytes and instruction mix; by default only the
/// kernels that changed, and those in one capture only.
///
/// With KERNEL: a unified diff of that kernel's ISA in A and in B, comments
/// removed.
///
/// Exit status: 0; 1 when a --fail-on condition holds; 2 on error.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first capture folder (the baseline)
    pub a: PathBuf,

    /// The second capture folder
    pub b: PathBuf,

    /// A kernel (rank number in A, exact or demangled name, or regular
    /// expression): show the unified diff of its two ISA texts
    pub kernel: Option<String>,

    /// List every kernel, the unchanged ones too
    #[arg(long)]
    pub all: bool,

    /// Print the comparison as JSON
    #[arg(long, conflicts_with = "kernel")]
    pub json: bool,

    /// Exit with 1 when a condition holds for a kernel, e.g.
    /// `spill,instructions+5%` (`--help` lists the conditions)
    #[arg(long, value_name = "CONDITIONS", value_parser = parse_fail_on, conflicts_with = "kernel", long_help = gate::help("diff"))]
    pub fail_on: Option<FailOn>,

    /// Also write the comparison to FILE as a page to browse: one
    /// self-contained HTML file with the kernels of A and B, their figures,
    /// mix and ISA side by side
    #[arg(long, value_name = "FILE", conflicts_with = "kernel")]
    pub html: Option<PathBuf>,

    /// How many kernels of the comparison the page of --html holds: those
    /// that changed or are in one capture only first, then the others in
    /// A's order (`all`: every one)
    #[arg(long, value_name = "N", requires = "html", default_value_t = Limit::First(DEFAULT_PAGE_KERNELS), value_parser = |s: &str| Limit::parse(s, DEFAULT_PAGE_KERNELS))]
    pub page_kernels: Limit,

    /// With KERNEL: rename registers in order of first use, to hide a
    /// different register allocation
    #[arg(long, requires = "kernel")]
    pub normalize_regs: bool,

    /// When to colour the output
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = Color::Auto)]
    pub color: Color,
}

impl Cli {
    /// The command line `args` (the program's name first), parsed; on an
    /// error (or `--help`) it is printed and the process exits as clap
    /// does, with the fix for a command given without `--`.
    pub fn parse_args(args: Vec<OsString>) -> Cli {
        match Cli::try_parse_from(&args) {
            Ok(c) => c,
            Err(e) => {
                let tip = e.use_stderr().then(|| dashes_tip(&e, &args)).flatten();
                let _ = e.print();
                if let Some(t) = tip {
                    eprintln!("{t}");
                }
                std::process::exit(e.exit_code());
            }
        }
    }
}

/// When `e` refuses an argument that is not an option of ours and the
/// command line has no `--`: the line that says to put `--` before the
/// command (`xpu-asm-run ./app` runs nothing; `xpu-asm-run -- ./app`
/// does).
fn dashes_tip(e: &clap::Error, args: &[OsString]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        e.kind(),
        ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand
    ) || args.iter().any(|a| a == "--")
    {
        return None;
    }
    let refused = [ContextKind::InvalidSubcommand, ContextKind::InvalidArg]
        .into_iter()
        .find_map(|k| match e.get(k) {
            Some(ContextValue::String(s)) => Some(s.clone()),
            _ => None,
        })?;
    if refused.starts_with('-') {
        return None;
    }
    let at = args.iter().skip(1).position(|a| *a == *refused)? + 1;
    let words = |a: &[OsString]| -> Vec<String> {
        a.iter().map(|w| w.to_string_lossy().into_owned()).collect()
    };
    let ours = words(&args[1..at]);
    let command = words(&args[at..]).join(" ");
    let before = if ours.is_empty() {
        String::new()
    } else {
        format!("{} ", ours.join(" "))
    };
    let mut tip =
        format!("\nTo run a command, put `--` before it: xpu-asm-run {before}-- {command}");
    if let Some(sub) = similar_subcommand(&refused) {
        let rest = words(&args[at + 1..]).join(" ");
        tip.push_str(&format!(
            "\nFor the subcommand {sub}: xpu-asm-run {before}{sub} {rest}"
        ));
    }
    Some(tip)
}

/// The subcommand `word` looks like a misspelling of (its start, or at
/// most two letters apart), if any.
fn similar_subcommand(word: &str) -> Option<&'static str> {
    const SUBCOMMANDS: [&str; 6] = ["collect", "merge", "show", "diff", "port", "help"];
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let here = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != *cb))
                    .min(row[j] + 1)
                    .min(here + 1);
                prev = here;
            }
        }
        row[b.len()]
    };
    SUBCOMMANDS
        .into_iter()
        .find(|s| (word.len() >= 3 && s.starts_with(word)) || distance(word, s) <= 2)
}

fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    parse_conditions(s).map(FailOn)
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Capture folder [default: ./xpu-asm-<command>-<YYYYmmdd-HHMMSS>]
    #[arg(short, long, value_name = "DIR", long_help = crate::capture::layout::out_help())]
    pub out: Option<PathBuf>,

    /// Reuse the earlier capture given with -o, deleting its entries first
    #[arg(long, long_help = crate::capture::layout::force_help())]
    pub force: bool,

    /// The interposer library (libxpu_asm_interposer.so)
    ///
    /// Without it: $XPU_ASM_INTERPOSER, then next to the xpu-asm-run
    /// executable, then ../lib from there, then the one xpu-asm-run carries,
    /// written once into CACHE/xpu-asm/interposer-<sha256>/ (CACHE:
    /// $XDG_CACHE_HOME, else ~/.cache).
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

    /// After the run, `port` its launched kernels to these products (e.g.
    /// `dg2,bmg`): DIR/port/<product>/ and the table of `port`
    #[arg(long, value_name = "PRODUCTS")]
    pub port_to: Vec<String>,

    /// Where kernels' ISA comes from
    ///
    /// auto (default): binary where the driver's compiler is IGC 2 (NEO
    /// 24 and later, whose compiler cache a plain run uses: a dump would
    /// compile every kernel again), dump elsewhere, when
    /// IGC_ShaderDumpEnable is set and with --keep launched or all. dump: IGC's .asm dumps of this run's
    /// compilations (with the vISA header's register-allocation figures),
    /// and for every kernel they lack (native modules, cache hits) IGA's
    /// disassembly of the module's binary, which is always saved. binary:
    /// no IGC dumps at all; every kernel's ISA is disassembled from its
    /// module's binary (the code the driver ran; source lines from its
    /// line tables, spill sizes from its metadata), and NEO's and SYCL's
    /// persistent caches are left as the user set them.
    #[arg(long, value_enum, value_name = "FROM", default_value_t = IsaMode::Auto)]
    pub isa: IsaMode,

    /// Time each kernel on the device (`--time=all`: every launch)
    ///
    /// Needs a GPU that runs the kernels: NEO without hardware (--emulate)
    /// gives no timestamps, and the report says so. By default a sample
    /// is timed: of each kernel and launch shape in each process the
    /// first 10 launches, then one in 100 ($XPU_ASM_TIME=sample:FIRST:EVERY
    /// sets other numbers); `all` times every launch. The table then has
    /// each kernel's device time and share, ranked by time (--sort), and
    /// report.json its `time` fields.
    #[arg(long, value_enum, value_name = "WHICH", num_args = 0..=1, require_equals = true,
          default_missing_value = "sample")]
    pub time: Option<TimeMode>,

    #[command(flatten)]
    pub report: ReportArgs,

    /// The command to run and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// `--time`: which launches are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeMode {
    /// A sample: the first launches of each kernel and shape, then one in N.
    Sample,
    /// Every launch.
    All,
}

impl TimeMode {
    /// The interposer's `XPU_ASM_TIME`: `all`, or for a sample the user's
    /// own `sample:FIRST:EVERY` (`users`) when it is one, else the default.
    pub fn env_value(self, users: Option<&str>) -> String {
        use xpu_asm_record::times::Policy;
        match self {
            TimeMode::All => Policy::ALL.env_value(),
            TimeMode::Sample => users
                .and_then(Policy::from_env)
                .filter(|p| !p.all)
                .unwrap_or(Policy::DEFAULT)
                .env_value(),
        }
    }
}

/// `--isa`: where kernels' ISA comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum IsaMode {
    /// `binary` where NEO's compiler is IGC 2 alone, else `dump`
    #[default]
    Auto,
    /// IGC's dumps first, module binaries for what they lack.
    Dump,
    /// Module binaries only; IGC dumps nothing.
    Binary,
}

impl IsaMode {
    /// The mode `auto` stands for: `binary` when the only IGC here is
    /// `igc` 2 or later (`only_igc`) and the user did not ask IGC for dumps
    /// (`users_dump`), else `dump`; other modes as they are.
    pub fn resolve(self, only_igc: Option<u32>, users_dump: bool) -> IsaMode {
        match self {
            IsaMode::Auto if !users_dump && only_igc.is_some_and(|m| m >= 2) => IsaMode::Binary,
            IsaMode::Auto => IsaMode::Dump,
            other => other,
        }
    }
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
    /// Print the JSON report (DIR/report.json's, narrowed by --filter)
    /// instead of the table
    #[arg(long)]
    pub json: bool,

    /// Print nothing but errors (DIR/report.json is still written)
    #[arg(short, long)]
    pub quiet: bool,

    /// Also list the kernels IGC compiled that were never launched
    #[arg(long)]
    pub all: bool,

    /// Show only kernels whose name (mangled or demangled) matches REGEX,
    /// each with its rank in the whole report; report.json, report.html
    /// and asm/ hold every kernel whatever is shown
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub filter: Option<regex::Regex>,

    /// The table's order: `launches` (the report's ranks), `time` (device
    /// time, of a run with --time) or `name` [default: time with --time,
    /// else launches]; report.json keeps its ranks
    #[arg(long, value_enum, value_name = "BY")]
    pub sort: Option<Sort>,

    /// Which IGC dump files to keep after matching
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = Keep::Asm)]
    pub keep: Keep,

    /// How many launched kernels get a readable copy under DIR/asm/, the
    /// most launched first (`all`: every one); the others' ISA stays where
    /// the table's ISA column says
    #[arg(long, value_name = "N", default_value_t = Limit::First(DEFAULT_ASM_COPIES), value_parser = |s: &str| Limit::parse(s, DEFAULT_ASM_COPIES))]
    pub asm_copies: Limit,

    /// How many kernels DIR/report.html holds, the most launched first
    /// (`all`: every one; a page of 100,000 does not open in a browser);
    /// report.json holds every one
    #[arg(long, value_name = "N", default_value_t = Limit::First(DEFAULT_PAGE_KERNELS), value_parser = |s: &str| Limit::parse(s, DEFAULT_PAGE_KERNELS))]
    pub page_kernels: Limit,
}

fn parse_regex(s: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(s).map_err(|e| format!("invalid regular expression: {e}"))
}

/// `--emulate`'s device, in any case (`PVC` is pvc, as ocloc lists it).
fn parse_device(s: &str) -> Result<String, String> {
    if !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(s.to_ascii_lowercase())
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

    /// No help text (of a command, an option or a value) shows the code's
    /// own references (`[`IsaMode::resolve`]`): doc comments are help.
    #[test]
    fn no_help_shows_a_code_reference() {
        let mut cmd = Cli::command();
        cmd.build();
        let mut texts = Vec::new();
        let mut commands = vec![cmd];
        while let Some(c) = commands.pop() {
            texts.extend(c.get_about().map(|t| t.to_string()));
            texts.extend(c.get_long_about().map(|t| t.to_string()));
            for a in c.get_arguments() {
                texts.extend(a.get_help().map(|t| t.to_string()));
                texts.extend(a.get_long_help().map(|t| t.to_string()));
                for v in a.get_possible_values() {
                    texts.extend(v.get_help().map(|t| t.to_string()));
                }
            }
            commands.extend(c.get_subcommands().cloned());
        }
        assert!(texts.len() > 100, "{}", texts.len());
        for t in texts {
            assert!(!t.contains("[`") && !t.contains("::"), "{t}");
        }
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("xpu-asm-run").chain(args.iter().copied()))
    }

    #[test]
    fn asm_copies_and_page_kernels_take_a_count_or_all() {
        let limits = |args: &[&str]| match parse(&[&["collect", "d"][..], args].concat()) {
            Ok(Cli {
                sub: Some(Sub::Collect(a)),
                ..
            }) => Ok((a.report.asm_copies, a.report.page_kernels)),
            Ok(_) => panic!("not collect"),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(limits(&[]), Ok((Limit::First(10_000), Limit::First(5_000))));
        for (flag, default) in [("--asm-copies", 10_000), ("--page-kernels", 5_000)] {
            let limit = |v: &str| {
                limits(&[flag, v]).map(|(a, p)| if flag == "--asm-copies" { a } else { p })
            };
            assert_eq!(limit("0"), Ok(Limit::First(0)));
            assert_eq!(limit("7"), Ok(Limit::First(7)));
            assert_eq!(limit("all"), Ok(Limit::All));
            for bad in ["ten", "", "1.5", "+all"] {
                let e = limit(bad).unwrap_err();
                let want = format!("expected a number of kernels or `all` (default {default})");
                assert!(e.contains(&want), "{flag} {bad}: {e}");
            }
        }
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
            other => panic!("collect not parsed: {other:?}"),
        }
        let c = parse(&["merge", "-o", "all", "a", "b", "--json"]).unwrap();
        match c.sub {
            Some(Sub::Merge(m)) => {
                assert_eq!(m.out, PathBuf::from("all"));
                assert_eq!(m.dirs, [PathBuf::from("a"), PathBuf::from("b")]);
                assert!(m.report.json);
            }
            _ => panic!("merge not parsed"),
        }
        assert!(parse(&["merge", "a", "b"]).is_err(), "-o is required");

        // A command named `collect` runs after `--`.
        let c = parse(&["--", "collect", "d"]).unwrap();
        assert!(c.sub.is_none());
        assert_eq!(c.run.command, ["collect", "d"]);
    }

    #[test]
    fn show_and_diff_parse() {
        let c = parse(&["show", "d", "7", "--lines", "--color", "always"]).unwrap();
        match c.sub {
            Some(Sub::Show(a)) => {
                assert_eq!(
                    (a.dir, a.kernel.as_deref()),
                    (PathBuf::from("d"), Some("7"))
                );
                assert!(a.lines);
                assert_eq!(a.color, Color::Always);
            }
            other => panic!("show not parsed: {other:?}"),
        }
        // A name exactly, even one that reads as a rank, or the empty one.
        for (args, name, hex) in [
            (&["show", "d", "--name", "1"][..], Some("1"), None),
            (&["show", "d", "--name", ""][..], Some(""), None),
            (
                &["show", "d", "--name-hex", "626164ff"][..],
                None,
                Some("626164ff"),
            ),
        ] {
            match parse(args).unwrap().sub {
                Some(Sub::Show(a)) => {
                    assert_eq!(a.kernel, None);
                    assert_eq!(a.name.as_deref().and_then(|n| n.to_str()), name);
                    assert_eq!(a.name_hex.as_deref(), hex);
                }
                other => panic!("show not parsed: {other:?}"),
            }
        }
        assert!(parse(&["show", "d"]).is_err(), "a kernel is required");
        assert!(parse(&["show", "d", "1", "--name", "1"]).is_err());
        assert!(parse(&["show", "d", "--name", "1", "--name-hex", "31"]).is_err());
        let c = parse(&["show", "d", "k", "--json"]).unwrap();
        assert!(matches!(c.sub, Some(Sub::Show(a)) if a.json && !a.lines));
        assert!(parse(&["show", "d", "k", "--json", "--lines"]).is_err());
        assert!(parse(&["show", "d", "k", "--json", "--cfg"]).is_err());
        let c = parse(&["diff", "a", "b", "--json", "--fail-on", "spill,grf+0"]).unwrap();
        match c.sub {
            Some(Sub::Diff(a)) => {
                assert_eq!((a.a, a.b, a.kernel), ("a".into(), "b".into(), None));
                assert!(a.json && !a.all);
                assert_eq!(a.fail_on.map(|f| f.0.len()), Some(2));
            }
            other => panic!("diff not parsed: {other:?}"),
        }
        let c = parse(&["diff", "a", "b", "--html", "d.html"]).unwrap();
        assert!(matches!(c.sub, Some(Sub::Diff(a)) if a.html == Some(PathBuf::from("d.html"))));
        assert!(parse(&["diff", "a", "b", "k", "--html", "d.html"]).is_err());
        let c = parse(&["diff", "a", "b", "--html", "d.html", "--page-kernels", "3"]).unwrap();
        assert!(matches!(c.sub, Some(Sub::Diff(a)) if a.page_kernels == Limit::First(3)));
        let c = parse(&["diff", "a", "b", "--html", "d.html"]).unwrap();
        assert!(matches!(c.sub, Some(Sub::Diff(a)) if a.page_kernels == Limit::First(5000)));
        assert!(parse(&["diff", "a", "b", "--page-kernels", "3"]).is_err());
        let c = parse(&["diff", "a", "b", "scale", "--normalize-regs"]).unwrap();
        assert!(
            matches!(c.sub, Some(Sub::Diff(a)) if a.kernel.as_deref() == Some("scale") && a.normalize_regs)
        );
        // --normalize-regs needs KERNEL; --json and --fail-on do not go with it.
        assert!(parse(&["diff", "a", "b", "--normalize-regs"]).is_err());
        assert!(parse(&["diff", "a", "b", "k", "--json"]).is_err());
        assert!(parse(&["diff", "a", "b", "k", "--fail-on", "spill"]).is_err());
        let e = parse(&["diff", "a", "b", "--fail-on", "instrs+5%"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown condition"), "{e}");
    }

    #[test]
    fn auto_is_binary_with_igc_2_alone_unless_dumps_are_asked_for() {
        use IsaMode::*;
        assert_eq!(Auto.resolve(Some(2), false), Binary);
        assert_eq!(Auto.resolve(Some(3), false), Binary);
        assert_eq!(Auto.resolve(Some(2), true), Dump);
        assert_eq!(Auto.resolve(Some(1), false), Dump);
        assert_eq!(Auto.resolve(None, false), Dump);
        assert_eq!(Dump.resolve(Some(2), false), Dump);
        assert_eq!(Binary.resolve(Some(1), true), Binary);
    }

    #[test]
    fn bad_input_is_refused_before_anything_runs() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["sh"]).is_err());
        assert!(parse(&["--filter", "(", "--", "true"]).is_err());
        assert!(parse(&["--emulate", "../x", "--", "true"]).is_err());
        assert!(parse(&["--keep", "some", "--", "true"]).is_err());
        assert!(parse(&["--isa", "dumps-and-more", "--", "true"]).is_err());
        assert_eq!(parse(&["--", "true"]).unwrap().run.isa, IsaMode::Auto);
        // --time, --time=all; no --time: none; a value only after `=`.
        assert_eq!(parse(&["--", "true"]).unwrap().run.time, None);
        let t = |args: &[&str]| parse(args).unwrap().run.time;
        assert_eq!(t(&["--time", "--", "true"]), Some(TimeMode::Sample));
        assert_eq!(t(&["--time=all", "--", "true"]), Some(TimeMode::All));
        assert_eq!(t(&["--time=sample", "--", "true"]), Some(TimeMode::Sample));
        assert!(parse(&["--time=some", "--", "true"]).is_err());
        assert_eq!(TimeMode::All.env_value(Some("sample:1:2")), "all");
        assert_eq!(TimeMode::Sample.env_value(None), "sample:10:100");
        assert_eq!(TimeMode::Sample.env_value(Some("sample:1:2")), "sample:1:2");
        assert_eq!(
            TimeMode::Sample.env_value(Some("nonsense")),
            "sample:10:100"
        );
        assert_eq!(
            parse(&["--isa", "dump", "--", "true"]).unwrap().run.isa,
            IsaMode::Dump
        );
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
