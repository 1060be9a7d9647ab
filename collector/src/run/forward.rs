//! The launcher-inside form (`xpu-asm-run -- mpirun ...`): making sure the
//! variables that switch the interposer on reach ranks on other hosts, or
//! saying before the run that they will not.
//!
//! | launcher | what reaches remote ranks | done here |
//! | --- | --- | --- |
//! | Open MPI `mpirun`/`mpiexec` | only variables it is told to forward (`-x`, `mca_base_env_list`) | ours are added to `OMPI_MCA_mca_base_env_list`, or as `-x` when the command already uses `-x` (Open MPI refuses both at once) |
//! | Hydra `mpiexec` (MPICH, Intel MPI: by name, or `hydra_pmi_proxy` beside it) | the whole environment | a warning when `-envnone`/`-envlist`/`-genvnone`/`-genvlist` limit it |
//! | `srun` | the whole environment (`--export=ALL`) | a warning when `--export` limits it |

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Open MPI's variable naming the variables `mpirun` forwards to every rank.
pub const OMPI_ENV_LIST: &str = "OMPI_MCA_mca_base_env_list";
const OMPI_ENV_LIST_DELIMITER: &str = "OMPI_MCA_mca_base_env_list_delimiter";

/// What to do so that remote ranks are recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Not a launcher, or one that forwards everything.
    Nothing,
    /// Add these variables for the launcher.
    Env(Vec<(OsString, OsString)>),
    /// Run this command instead (the user's, with forwarding options added),
    /// and say so.
    Args(Vec<OsString>, String),
    /// Ranks on other hosts will not be recorded: say so before the run.
    Warn(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    OpenMpi,
    Hydra,
    Srun,
    /// `mpirun`/`mpiexec` of an MPI not recognised (a wrapper script).
    Unknown,
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `program` as the shell would find it.
fn resolve(program: &OsStr) -> Option<std::path::PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Some(program.into());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn kind(cmd0: &OsStr) -> Option<Kind> {
    let name = file_name(Path::new(cmd0));
    // `mpirun` is usually a link (Debian's alternatives) to the real one.
    let real = resolve(cmd0)
        .and_then(|p| std::fs::canonicalize(p).ok())
        .map(|p| file_name(&p))
        .unwrap_or_default();
    let is = |s: &str| name.contains(s) || real.contains(s);
    // Hydra's proxy beside it: MPICH's, or Intel MPI's `mpiexec` (a copy
    // of `mpiexec.hydra`, not a link, as pip installs it).
    let beside_hydra_proxy = || {
        resolve(cmd0)
            .and_then(|p| std::fs::canonicalize(p).ok())
            .and_then(|p| p.parent().map(|d| d.join("hydra_pmi_proxy").is_file()))
            .unwrap_or(false)
    };
    match name.as_str() {
        "srun" => Some(Kind::Srun),
        "mpirun" | "mpiexec" | "orterun" | "mpirun.openmpi" | "mpiexec.openmpi" | "prterun"
        | "mpiexec.hydra" | "mpirun.mpich" | "mpiexec.mpich" => {
            Some(if is("openmpi") || is("orterun") || is("prterun") {
                Kind::OpenMpi
            } else if is("hydra") || is("mpich") || beside_hydra_proxy() {
                Kind::Hydra
            } else {
                Kind::Unknown
            })
        }
        _ => None,
    }
}

fn has_arg(args: &[OsString], any: &[&str]) -> bool {
    args.iter().any(|a| {
        let a = a.to_string_lossy();
        any.iter()
            .any(|o| a == *o || a.starts_with(&format!("{o}=")))
    })
}

const PER_RANK_HINT: &str = "ranks on other hosts will not be recorded; run one xpu-asm-run per \
     rank instead: `mpirun ... xpu-asm-run -o DIR -- APP` (docs/clusters.md)";

/// The plan for running `command` with our variables `ours` (the names
/// [`crate::run::launch::child_env`] sets); `env` reads the environment.
pub fn plan(
    command: &[OsString],
    ours: &[(OsString, OsString)],
    env: impl Fn(&str) -> Option<String>,
) -> Plan {
    let Some((cmd0, args)) = command.split_first() else {
        return Plan::Nothing;
    };
    let Some(kind) = kind(cmd0) else {
        return Plan::Nothing;
    };
    let names: Vec<String> = ours
        .iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    match kind {
        Kind::OpenMpi => open_mpi(cmd0, args, names, &env),
        Kind::Hydra => hydra(args, &names),
        Kind::Srun => srun(args, &names, &env),
        Kind::Unknown => unknown(cmd0, args, &names),
    }
}

/// Open MPI forwards only the variables it is told to: ours are added to
/// its list, or as `-x` when the command already uses `-x`.
fn open_mpi(
    cmd0: &OsString,
    args: &[OsString],
    names: Vec<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Plan {
    if args
        .iter()
        .any(|a| a.to_string_lossy().contains("mca_base_env_list"))
    {
        return Plan::Warn(format!(
            "the command sets mca_base_env_list itself, so xpu-asm-run cannot add {} to \
             what Open MPI forwards; add them to it, or {PER_RANK_HINT}",
            names.join(", ")
        ));
    }
    if has_arg(args, &["-x", "--x"]) {
        // Open MPI refuses -x together with mca_base_env_list.
        let mut cmd = vec![cmd0.clone()];
        for n in &names {
            cmd.push("-x".into());
            cmd.push(n.into());
        }
        cmd.extend(args.iter().cloned());
        return Plan::Args(
            cmd,
            format!(
                "the command forwards variables with -x: added `-x {}` so that ranks on \
                 other hosts are recorded too",
                names.join(" -x ")
            ),
        );
    }
    let delim = env(OMPI_ENV_LIST_DELIMITER)
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| ";".into());
    let mut list: Vec<String> = env(OMPI_ENV_LIST)
        .filter(|l| !l.is_empty())
        .into_iter()
        .collect();
    list.extend(names);
    Plan::Env(vec![(OMPI_ENV_LIST.into(), list.join(&delim).into())])
}

/// Hydra passes the whole environment unless told otherwise.
fn hydra(args: &[OsString], names: &[String]) -> Plan {
    if has_arg(
        args,
        &[
            "-envnone",
            "-envlist",
            "-genvnone",
            "-genvlist",
            "--envnone",
            "--envlist",
            "--genvnone",
            "--genvlist",
        ],
    ) {
        Plan::Warn(format!(
            "the command limits the variables mpiexec passes to ranks (-envnone/-envlist); \
             add {} to its list, or {PER_RANK_HINT}",
            names.join(", ")
        ))
    } else {
        Plan::Nothing
    }
}

/// `srun` passes the whole environment unless `--export` limits it.
fn srun(args: &[OsString], names: &[String], env: &dyn Fn(&str) -> Option<String>) -> Plan {
    let without_all = |v: &str| !v.split(',').any(|e| e == "ALL");
    // `--export=VALUE`, or `--export VALUE` (srun takes both).
    let limited = args.iter().enumerate().any(|(i, a)| {
        let a = a.to_string_lossy();
        match a.strip_prefix("--export") {
            Some(rest) if rest.starts_with('=') => without_all(&rest[1..]),
            Some("") => args
                .get(i + 1)
                .is_some_and(|v| without_all(&v.to_string_lossy())),
            _ => false,
        }
    }) || env("SLURM_EXPORT_ENV").is_some_and(|v| without_all(&v));
    if limited {
        Plan::Warn(format!(
            "srun --export does not pass the whole environment; add ALL or {} to it, or \
             {PER_RANK_HINT}",
            names.join(",")
        ))
    } else {
        Plan::Nothing
    }
}

/// An `mpirun`/`mpiexec` not recognised: a warning when it is given hosts.
fn unknown(cmd0: &OsString, args: &[OsString], names: &[String]) -> Plan {
    if has_arg(
        args,
        &[
            "-H",
            "-host",
            "--host",
            "-hosts",
            "-f",
            "-hostfile",
            "--hostfile",
            "-machinefile",
            "--machinefile",
        ],
    ) {
        Plan::Warn(format!(
            "{} is not an MPI launcher xpu-asm-run knows; if it does not pass the \
             environment ({}) to other hosts, {PER_RANK_HINT}",
            cmd0.to_string_lossy(),
            names.join(", ")
        ))
    } else {
        Plan::Nothing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn none(_: &str) -> Option<String> {
        None
    }

    fn ours() -> Vec<(OsString, OsString)> {
        vec![
            ("LD_PRELOAD".into(), "/l.so".into()),
            ("XPU_ASM_OUT".into(), "/o".into()),
        ]
    }

    #[test]
    fn open_mpi_forwards_our_variables() {
        assert_eq!(
            plan(&os(&["mpirun.openmpi", "-H", "a,b", "app"]), &ours(), none),
            Plan::Env(vec![(
                OMPI_ENV_LIST.into(),
                "LD_PRELOAD;XPU_ASM_OUT".into()
            )])
        );
        match plan(&os(&["mpirun.openmpi", "-x", "FOO", "app"]), &ours(), none) {
            Plan::Args(cmd, note) => {
                assert_eq!(
                    cmd,
                    os(&[
                        "mpirun.openmpi",
                        "-x",
                        "LD_PRELOAD",
                        "-x",
                        "XPU_ASM_OUT",
                        "-x",
                        "FOO",
                        "app"
                    ])
                );
                assert!(note.contains("-x LD_PRELOAD -x XPU_ASM_OUT"), "{note}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            plan(
                &os(&["mpirun.openmpi", "--mca", "mca_base_env_list", "A", "app"]),
                &ours(),
                none
            ),
            Plan::Warn(_)
        ));
    }

    #[test]
    fn an_mpiexec_beside_hydras_proxy_is_hydra() {
        let t = tempfile::tempdir().unwrap();
        let mpiexec = t.path().join("mpiexec");
        std::fs::write(&mpiexec, "").unwrap();
        let cmd = |extra: &str| {
            let mut v = vec![mpiexec.clone().into_os_string(), extra.into()];
            v.extend(os(&["-n", "2", "app"]));
            v
        };
        // Not known: hosts give a warning, -envnone none.
        assert!(
            matches!(plan(&cmd("-hosts"), &ours(), none), Plan::Warn(w) if w.contains("not an MPI launcher"))
        );
        assert_eq!(plan(&cmd("-envnone"), &ours(), none), Plan::Nothing);
        std::fs::write(t.path().join("hydra_pmi_proxy"), "").unwrap();
        assert_eq!(plan(&cmd("-hosts"), &ours(), none), Plan::Nothing);
        assert!(
            matches!(plan(&cmd("-envnone"), &ours(), none), Plan::Warn(w) if w.contains("limits the variables mpiexec passes"))
        );
    }

    #[test]
    fn a_users_env_list_is_kept_with_its_delimiter() {
        let env = |k: &str| match k {
            OMPI_ENV_LIST => Some("A,B=1".to_string()),
            OMPI_ENV_LIST_DELIMITER => Some(",".to_string()),
            _ => None,
        };
        assert_eq!(
            plan(&os(&["mpirun.openmpi", "app"]), &ours(), env),
            Plan::Env(vec![(
                OMPI_ENV_LIST.into(),
                "A,B=1,LD_PRELOAD,XPU_ASM_OUT".into()
            )])
        );
    }

    #[test]
    fn hydra_and_srun_warn_only_when_the_environment_is_limited() {
        assert_eq!(
            plan(
                &os(&["mpiexec.hydra", "-hosts", "a,b", "app"]),
                &ours(),
                none
            ),
            Plan::Nothing
        );
        match plan(&os(&["mpiexec.hydra", "-envnone", "app"]), &ours(), none) {
            Plan::Warn(w) => assert!(w.contains("xpu-asm-run -o DIR -- APP"), "{w}"),
            other => panic!("{other:?}"),
        }
        for limited in [
            &["srun", "--export=NONE", "app"][..],
            &["srun", "--export", "NONE", "app"],
            &["srun", "--export=HOME,PATH", "app"],
        ] {
            assert!(
                matches!(plan(&os(limited), &ours(), none), Plan::Warn(_)),
                "{limited:?}"
            );
        }
        for whole in [
            &["srun", "app"][..],
            &["srun", "--export", "ALL,FOO=1", "app"],
            &["srun", "--export=ALL", "app"],
        ] {
            assert_eq!(plan(&os(whole), &ours(), none), Plan::Nothing, "{whole:?}");
        }
        let batch_none = |k: &str| (k == "SLURM_EXPORT_ENV").then(|| "NONE".to_string());
        assert!(matches!(
            plan(&os(&["srun", "app"]), &ours(), batch_none),
            Plan::Warn(_)
        ));
        assert_eq!(plan(&os(&["./app", "-x"]), &ours(), none), Plan::Nothing);
    }
}
