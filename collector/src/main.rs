//! `xpu-asm-run`: a thin shell over the `xpu_asm_collector` library: the
//! command line parsed, then its command run ([`commands`]).

use xpu_asm_collector::commands::{self, Cli, Sub};

/// mimalloc: a collection of 100,000 kernels makes and frees millions of
/// small strings and vectors on every core; glibc's malloc took 8% of its
/// CPU (`docs/performance.md`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    roomy_heaps();
    keep_freed_pages();
    let cli = Cli::parse_args(std::env::args_os().collect());
    let code = match cli.sub {
        Some(Sub::Collect(a)) => commands::collect::main(&a.dir, &a.report),
        Some(Sub::Merge(a)) => commands::merge::main(&a),
        Some(Sub::Show(a)) => commands::show::main(&a),
        Some(Sub::Diff(a)) => commands::diff::main(&a),
        Some(Sub::Port(a)) => commands::port::main(&a),
        Some(Sub::PortChild(a)) => xpu_asm_collector::port::replay::child_main(&a.plan),
        Some(Sub::Rebuild(a)) => xpu_asm_collector::run::rebuild::child_main(&a.folder),
        None => match commands::run::main(&cli.run) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("xpu-asm-run: {e}");
                e.exit_code()
            }
        },
    };
    std::process::exit(code);
}

/// glibc's malloc still serves the C libraries (IGA). It grows and trims
/// each thread's heap a few pages at a time: IGA's text of a kernel,
/// megabytes, made it call `mprotect` about a thousand times per run. A
/// heap that grows by 32 MiB and is not trimmed asks the kernel a few
/// times instead; the pages not touched stay unbacked.
fn roomy_heaps() {
    // SAFETY: mallopt only sets glibc's malloc parameters, before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// mimalloc's `mi_option_purge_delay`, as the `mi_option_t` of the
/// mimalloc that the `mimalloc` crate builds numbers it (3.3,
/// `MI_VERSION_OF_OPTIONS`).
const MI_OPTION_PURGE_DELAY: libc::c_int = 15;
/// The mimalloc version (major, minor) whose options these are.
const MI_VERSION_OF_OPTIONS: libc::c_int = 303;

extern "C" {
    fn mi_version() -> libc::c_int;
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
}

/// Pages mimalloc freed stay the process's: by default it gives them back
/// after a second, and a collection, which frees and makes hundreds of MB
/// in turn, faulted them in (and the kernel zeroed them) again. It is
/// built not to ask for transparent huge pages (feature `no_thp`), which
/// made each of those faults zero 2 MiB: together a tenth of a
/// collection's CPU. The memory goes back when xpu-asm-run exits; while
/// it waits for a command, it holds little. A mimalloc of another version
/// is left as it is.
fn keep_freed_pages() {
    // SAFETY: mi_version reads a constant; mi_option_set sets an option of
    // the version checked, before any other thread exists.
    unsafe {
        if mi_version() / 100 == MI_VERSION_OF_OPTIONS {
            mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mimalloc_built_is_the_one_whose_options_are_named() {
        // A mimalloc of another version: look its mi_option_t up again.
        // SAFETY: reads a constant.
        assert_eq!(
            unsafe { super::mi_version() } / 100,
            super::MI_VERSION_OF_OPTIONS
        );
    }
}
