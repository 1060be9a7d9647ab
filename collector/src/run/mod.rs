//! Running a command under the interposer: one run (`xpu-asm-run -- cmd`,
//! [`launch`]), one instance per rank of a parallel job ([`job`]), the
//! launcher-inside form (`xpu-asm-run -- mpirun ...`, [`forward`]), the
//! notices of processes that could write no record ([`notices`]), the interposer the
//! binary carries ([`interposer`]), and modules compiled again for their
//! source lines ([`rebuild`], through Level Zero: [`ze`]).

pub mod emulate;
pub mod forward;
pub mod interposer;
pub mod job;
pub mod launch;
pub mod notices;
pub mod rebuild;
pub mod ze;
