//! Which rank of which parallel job a process is, from the variables its
//! launcher set. Read the same way by the interposer (at load, into the
//! process record) and by `xpu-asm-run` (to tell the instances of one job
//! that share a capture folder).
//!
//! Launchers are tried in an order that picks the one that started the
//! process when several left variables behind: `mpirun` inside a Slurm
//! allocation sees `SLURM_*` of the allocation, and Hydra started by `srun`
//! leaves `SLURM_PROCID` of its proxy.

/// The launcher that set the variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// Open MPI's `mpirun`/`mpiexec` (`OMPI_COMM_WORLD_*`).
    OpenMpi,
    /// HPE Cray PALS (`PALS_RANKID`).
    Pals,
    /// A PMI-1/2 process manager: MPICH's and Intel MPI's Hydra (`PMI_RANK`).
    Pmi,
    /// A PMIx server other than Open MPI's (`PMIX_RANK`).
    Pmix,
    /// Slurm's `srun` (`SLURM_PROCID` in a job step).
    Slurm,
}

impl Launcher {
    pub fn as_str(self) -> &'static str {
        match self {
            Launcher::OpenMpi => "openmpi",
            Launcher::Pals => "pals",
            Launcher::Pmi => "pmi",
            Launcher::Pmix => "pmix",
            Launcher::Slurm => "slurm",
        }
    }

    pub fn parse(s: &str) -> Option<Launcher> {
        [
            Launcher::OpenMpi,
            Launcher::Pals,
            Launcher::Pmi,
            Launcher::Pmix,
            Launcher::Slurm,
        ]
        .into_iter()
        .find(|l| l.as_str() == s)
    }
}

/// A process's place in its job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rank {
    pub launcher: Launcher,
    pub rank: u32,
    pub local_rank: Option<u32>,
    /// Number of ranks in the job, when the launcher says.
    pub size: Option<u32>,
    /// What tells this job from any other, when the launcher gives it
    /// (`openmpi:<jobid>`, `slurm:<job>.<step>`, `pals:<apid>`, `pmix:<ns>`,
    /// Intel MPI's Hydra `hydra:<I_MPI_HYDRA_UUID>`); MPICH's Hydra gives none.
    pub job: Option<String>,
}

/// The variables read, for documentation and for tests that clear them.
pub const VARS: [&str; 21] = [
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_MCA_ess_base_jobid",
    "PMIX_NAMESPACE",
    "PMIX_RANK",
    "PALS_RANKID",
    "PALS_LOCAL_RANKID",
    "PALS_APID",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALRANKID",
    "MPI_LOCALNRANKS",
    "I_MPI_HYDRA_UUID",
    "SLURM_PROCID",
    "SLURM_LOCALID",
    "SLURM_NTASKS",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "SLURM_STEPID",
];

/// The rank described by the variables `get` returns, or `None` when no
/// launcher set them (a process run by hand).
pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<Rank> {
    let num = |name: &str| get(name).and_then(|v| v.trim().parse::<u32>().ok());
    let text = |name: &str| get(name).filter(|v| !v.is_empty());
    let slurm_step = || {
        let job = text("SLURM_JOB_ID")?;
        let step = text("SLURM_STEP_ID").or_else(|| text("SLURM_STEPID"))?;
        Some(format!("slurm:{job}.{step}"))
    };
    if let Some(rank) = num("OMPI_COMM_WORLD_RANK") {
        return Some(Rank {
            launcher: Launcher::OpenMpi,
            rank,
            local_rank: num("OMPI_COMM_WORLD_LOCAL_RANK"),
            size: num("OMPI_COMM_WORLD_SIZE"),
            job: text("OMPI_MCA_ess_base_jobid")
                .or_else(|| text("PMIX_NAMESPACE"))
                .map(|j| format!("openmpi:{j}")),
        });
    }
    if let Some(rank) = num("PALS_RANKID") {
        return Some(Rank {
            launcher: Launcher::Pals,
            rank,
            local_rank: num("PALS_LOCAL_RANKID"),
            size: num("PMI_SIZE"),
            job: text("PALS_APID").map(|a| format!("pals:{a}")),
        });
    }
    if let Some(rank) = num("PMI_RANK") {
        return Some(Rank {
            launcher: Launcher::Pmi,
            rank,
            local_rank: num("MPI_LOCALRANKID"),
            size: num("PMI_SIZE"),
            // Intel MPI's Hydra names each run; MPICH's does not, but
            // started through srun each mpiexec is a step of its own.
            job: text("I_MPI_HYDRA_UUID")
                .map(|u| format!("hydra:{u}"))
                .or_else(slurm_step),
        });
    }
    if let Some(rank) = num("PMIX_RANK") {
        return Some(Rank {
            launcher: Launcher::Pmix,
            rank,
            local_rank: None,
            size: None,
            job: text("PMIX_NAMESPACE").map(|n| format!("pmix:{n}")),
        });
    }
    let step = slurm_step()?;
    let rank = num("SLURM_PROCID")?;
    Some(Rank {
        launcher: Launcher::Slurm,
        rank,
        local_rank: num("SLURM_LOCALID"),
        size: num("SLURM_STEP_NUM_TASKS").or_else(|| num("SLURM_NTASKS")),
        job: Some(step),
    })
}

/// `"0-3"`, `"0,2,5-7"`: sorted distinct ranks, runs shortened.
pub fn ranges(ranks: &[u32]) -> String {
    let mut v = ranks.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out = String::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if j > i {
            out.push_str(&format!("{}-{}", v[i], v[j]));
        } else {
            out.push_str(&v[i].to_string());
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn each_launcher_is_recognised() {
        assert_eq!(from_env(env(&[])), None);
        let r = from_env(env(&[
            ("OMPI_COMM_WORLD_RANK", "2"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_MCA_ess_base_jobid", "1214316545"),
            ("PMIX_RANK", "2"),
            // The allocation's variables do not win over mpirun's.
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "0"),
        ]))
        .unwrap();
        assert_eq!(
            r,
            Rank {
                launcher: Launcher::OpenMpi,
                rank: 2,
                local_rank: Some(0),
                size: Some(4),
                job: Some("openmpi:1214316545".into()),
            }
        );
        let r = from_env(env(&[
            ("PMI_RANK", "3"),
            ("PMI_SIZE", "4"),
            ("MPI_LOCALRANKID", "1"),
        ]))
        .unwrap();
        assert_eq!(
            (r.launcher, r.rank, r.local_rank, r.size, r.job),
            (Launcher::Pmi, 3, Some(1), Some(4), None)
        );
        let r = from_env(env(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_LOCALID", "1"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "3"),
        ]))
        .unwrap();
        assert_eq!(
            (r.launcher, r.rank, r.size, r.job.as_deref()),
            (Launcher::Slurm, 5, Some(8), Some("slurm:77.3"))
        );
        // A batch script (no step) is not a rank.
        assert_eq!(
            from_env(env(&[("SLURM_PROCID", "0"), ("SLURM_JOB_ID", "77")])),
            None
        );
        let r = from_env(env(&[("PALS_RANKID", "1"), ("PALS_APID", "ab")])).unwrap();
        assert_eq!(
            (r.launcher, r.job.as_deref()),
            (Launcher::Pals, Some("pals:ab"))
        );
        assert_eq!(Launcher::parse("pmi"), Some(Launcher::Pmi));
    }

    #[test]
    fn hydra_jobs_are_named_by_intel_mpi_or_by_the_slurm_step() {
        // Intel MPI's mpiexec inside a Slurm allocation: the rank is
        // PMI_RANK, not its proxy's SLURM_PROCID; the job is Hydra's run.
        let r = from_env(env(&[
            ("PMI_RANK", "2"),
            ("PMI_SIZE", "4"),
            ("MPI_LOCALRANKID", "2"),
            ("I_MPI_HYDRA_UUID", "1e5b0000-ab12-cd34-0001-020000000000"),
            ("SLURM_PROCID", "0"),
            ("SLURM_LOCALID", "0"),
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "0"),
        ]))
        .unwrap();
        assert_eq!(
            (r.launcher, r.rank, r.local_rank, r.job.as_deref()),
            (
                Launcher::Pmi,
                2,
                Some(2),
                Some("hydra:1e5b0000-ab12-cd34-0001-020000000000")
            )
        );
        // MPICH's under srun: the step.
        let r = from_env(env(&[
            ("PMI_RANK", "1"),
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "2"),
        ]))
        .unwrap();
        assert_eq!(r.job.as_deref(), Some("slurm:77.2"));
    }

    #[test]
    fn ranks_print_as_ranges() {
        assert_eq!(ranges(&[3, 0, 1, 2]), "0-3");
        assert_eq!(ranges(&[7, 0, 2, 5, 6, 2]), "0,2,5-7");
        assert_eq!(ranges(&[4]), "4");
        assert_eq!(ranges(&[]), "");
    }
}
