# Spack recipe of xpu-asm (docs/usage.md, "Building and installing"):
#
#   spack repo add packaging/spack
#   spack install xpu-asm
#
# Spack 1.x (its build systems in the builtin repository) and 0.2x
# (CargoPackage exported by spack.package). Tested with
# scripts/spack-check.sh; tests/tests/release.rs checks the sha256 below.

import os

from spack.package import *

try:  # Spack 1.x: the build systems are the builtin repository's
    from spack_repo.builtin.build_systems.cargo import CargoPackage

    #: Whether this Spack takes `depends_on("c")`: 1.x does (compilers are
    #: dependencies), and 0.23.0 on (the language "c").
    _C_IS_A_DEPENDENCY = True
except ImportError:  # Spack 0.2x: spack.package exports CargoPackage
    try:
        from spack.directives import SUPPORTED_LANGUAGES
    except ImportError:  # 0.22 and older: no languages
        SUPPORTED_LANGUAGES = ()
    # 0.22 and the development snapshots of 0.23 before "c" was a language
    # have the compiler in every build without it.
    _C_IS_A_DEPENDENCY = "c" in SUPPORTED_LANGUAGES


class XpuAsm(CargoPackage):
    """xpu-asm-run: the GPU ISA (IGC's assembly) of the Intel GPU kernels a
    program launches through Level Zero or OpenCL, each kernel matched by
    name to the code it ran, with its launches, shapes, registers, spills
    and occupancy.

    Use it to see, compare or gate the code of the kernels a command
    launches (SYCL, oneDNN, Triton, OpenCL, MPI jobs of many ranks) in one
    run, `xpu-asm-run -- CMD ARGS...`, instead of rerunning the program
    with the driver's dump flags and disassembling by hand (`ocloc
    disasm`, `iga`), and to port a capture to other GPUs without them.
    """

    homepage = "https://github.com/xpu-asm/xpu-asm"
    url = "https://github.com/xpu-asm/xpu-asm/releases/download/v0.1.0/xpu-asm-0.1.0.tar.gz"

    license("MIT", checked_by="xpu-asm")

    # The tarball scripts/source-tarball.sh makes of a commit (the same bytes
    # from the same commit): `scripts/source-tarball.sh COMMIT` prints this
    # sha256. A release replaces the commit and the sha256 with its own.
    # commit 25578e0a7866898ad66d38413fa1d86c3805aa3e
    version("0.1.0", sha256="6da74b7a89a999cefbcb0b6aec34af869ea2c93d2bbb7f2db4aa1d4ed42cdabb")

    # The workspace's rust-version; cc builds mimalloc, the allocator
    # xpu-asm-run is linked with, and links the binary.
    depends_on("rust@1.80:", type="build")
    if _C_IS_A_DEPENDENCY:
        depends_on("c", type="build")

    # What the build writes beside the binary: the interposer it carries
    # (so that runs from the prefix write no cache), the man pages and the
    # completions (xtask/, from the command line's definition).
    sanity_check_is_file = [
        join_path("bin", "xpu-asm-run"),
        join_path("lib", "libxpu_asm_interposer.so"),
        join_path("share", "man", "man1", "xpu-asm-run.1"),
        join_path("share", "bash-completion", "completions", "xpu-asm-run"),
    ]

    def _cargo(self, command, *args):
        """`cargo COMMAND` with the lock file's versions, into target/."""
        cargo = Executable(self.spec["rust"].prefix.bin.cargo)
        jobs = str(getattr(self.module, "make_jobs", 1))
        cargo(command, "--locked", "-j", jobs, "--target-dir", "target", *args)

    def build(self, spec, prefix):
        """The binary of the workspace's collector/ (which builds and embeds
        the interposer: collector/build.rs), then the man pages and the
        shell completions (xtask/), in one target folder."""
        with working_dir(self.stage.source_path):
            self._cargo("install", "--root", "out", "--path", "collector")
            self._cargo("run", "--release", "-p", "xpu-asm-xtask", "--", "docs", "generated")

    def install(self, spec, prefix):
        with working_dir(self.stage.source_path):
            mkdirp(prefix.bin, prefix.lib)
            install(join_path("out", "bin", "xpu-asm-run"), prefix.bin)
            # The interposer xpu-asm-run carries, byte for byte, found
            # from ../lib (docs/usage.md, "The interposer inside").
            embedded = find(
                join_path("target", "xpu-asm-interposer-embed"), "libxpu_asm_interposer.so"
            )
            embedded = [p for p in embedded if os.path.basename(os.path.dirname(p)) == "release"]
            if len(embedded) != 1:
                raise InstallError(f"not one embedded interposer in target/: {embedded}")
            install(embedded[0], prefix.lib)

            man1 = join_path(prefix, "share", "man", "man1")
            mkdirp(man1)
            for page in find(join_path("generated", "doc"), "*.1", recursive=False):
                install(page, man1)
            completions = {
                "xpu-asm-run.bash": join_path("bash-completion", "completions", "xpu-asm-run"),
                "_xpu-asm-run": join_path("zsh", "site-functions", "_xpu-asm-run"),
                "xpu-asm-run.fish": join_path("fish", "vendor_completions.d", "xpu-asm-run.fish"),
            }
            for name, dest in completions.items():
                dest = join_path(prefix, "share", dest)
                mkdirp(os.path.dirname(dest))
                install(join_path("generated", "complete", name), dest)

            docs = join_path(prefix, "share", "doc", "xpu-asm")
            mkdirp(docs)
            for f in ("README.md", "LICENSE", "CHANGELOG.md"):
                install(f, docs)

    def _runs(self):
        """The installed xpu-asm-run names its version and runs a command
        under its interposer (no GPU needed: `true` launches nothing)."""
        xpu_asm_run = Executable(join_path(self.prefix.bin, "xpu-asm-run"))
        out = xpu_asm_run("--version", output=str)
        assert out.startswith(f"xpu-asm-run {self.spec.version} (commit "), out
        with working_dir("spack-check", create=True):
            xpu_asm_run("-q", "-o", "capture", "--", "true")

    def check(self):
        """`spack install --test=root`: the installed binary runs (the
        workspace's `cargo test` needs the GPU stacks of docs/testing.md)."""
        self._runs()

    def test_runs(self):
        """xpu-asm-run names its version and runs a command"""
        self._runs()
