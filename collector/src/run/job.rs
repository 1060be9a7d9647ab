//! One `xpu-asm-run` per rank (`mpirun -np N xpu-asm-run -o DIR -- app`):
//! the instances of one job share DIR, on one host or on many through a
//! shared filesystem.
//!
//! Nothing here is a lock that a killed instance could leave held. The
//! folder belongs to the job named in `DIR/job.json`, created by whichever
//! instance comes first with a hard link of a complete file (atomic, and
//! refused when the name exists: exactly one creator); the others read it
//! and join when it names their job. Each rank then claims
//! `instances/rank-<R>.json` with `O_EXCL`, so a rank number seen twice
//! means a second, unrelated run, which is refused. An instance rewrites its
//! file (temporary file and rename) when its command ends; the instance
//! that then finds every rank of the job ended, and wins `O_EXCL` on
//! `instances/collector`, collects and prints the one table. No rank's
//! files are touched while it runs, since collection starts only after all
//! have ended.

use super::launch::{self, LaunchError, OutDir};
use crate::capture::job::{instance_path, instances, read_job, Instance, JobFile};
use crate::capture::layout::{marks_capture, CollectError, INSTANCES_DIR, JOB_FILE, REPORT_FILE};
use crate::capture::run::{unix_now, write_run_info, Exit, RunInfo};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};
use xpu_asm_record::ranks::{self, Rank};

const COLLECTOR_CLAIM: &str = "collector";
/// How long a rank given `--force` waits for rank 0 to clear the folder.
const FORCE_WAIT: Duration = Duration::from_secs(60);
/// How long a rank given `--force` that finds files other than a
/// capture's waits for rank 0's `job.json` (rank 0 writes it right after
/// clearing, so only a folder cleared a moment earlier shows this).
const OTHER_GRACE: Duration = Duration::from_secs(2);

/// Launchers: run under one of these, xpu-asm-run is the launcher-inside
/// form, not a rank, whatever variables an enclosing allocation left.
pub const LAUNCHERS: [&str; 9] = [
    "mpirun",
    "mpiexec",
    "orterun",
    "prterun",
    "srun",
    "aprun",
    "mpiexec.hydra",
    "mpirun.openmpi",
    "mpiexec.openmpi",
];

/// This process's rank when xpu-asm-run is one instance per rank; `None`
/// when no launcher started it, or when its command is itself a launcher.
pub fn this_rank(cmd0: &OsStr) -> Option<Rank> {
    if is_launcher(cmd0) {
        return None;
    }
    ranks::from_env(|k| std::env::var(k).ok())
}

/// Whether `cmd0` names a job launcher (by its file name).
pub fn is_launcher(cmd0: &OsStr) -> bool {
    let name = Path::new(cmd0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    LAUNCHERS.contains(&name.as_str())
}

fn job_error(msg: String) -> LaunchError {
    LaunchError::Job(msg)
}

fn io_error(path: &Path, source: std::io::Error) -> LaunchError {
    LaunchError::OutCreate {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether every rank of the job has ended (its command ended or could not
/// start), as far as `dir` tells.
fn all_ended(dir: &Path, size: u32) -> bool {
    let done = instances(dir)
        .iter()
        .filter(|i| i.state != "running")
        .count();
    done >= size as usize
}

/// Whether `job` (found in the folder) is the job `rank` belongs to.
fn same_job(dir: &Path, job: &JobFile, rank: &Rank) -> bool {
    if job.launcher != rank.launcher.as_str() || job.size != rank.size {
        return false;
    }
    match (&job.id, &rank.job) {
        (Some(a), Some(b)) => a == b,
        // No id (Hydra): the same kind of job, still under way; a rank
        // number claimed twice then tells a second run apart.
        (None, None) => {
            !dir.join(REPORT_FILE).exists() && !job.size.is_some_and(|n| all_ended(dir, n))
        }
        _ => false,
    }
}

/// What one look at a capture folder shows.
enum Look {
    /// `job.json` names a job.
    Job(JobFile),
    /// Nothing but the temporary files of a `job.json` being made.
    Empty,
    /// An earlier capture (or what is left of one while it is deleted).
    Capture,
    /// Files that are not a capture's.
    Other,
}

/// Looks at `dir` once: its entries come from one listing, so a folder
/// that another rank clears meanwhile is never seen both as holding
/// entries and as holding none of a capture's.
fn look(dir: &Path) -> Look {
    if let Some(job) = read_job(dir) {
        return Look::Job(job);
    }
    let mut any = false;
    let mut capture = false;
    let mut job_file = false;
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.filter_map(|e| e.ok()) {
            let name = e.file_name();
            if name.as_bytes().starts_with(b".job.json.tmp") {
                continue;
            }
            any = true;
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            let name = name.as_bytes();
            job_file |= name == JOB_FILE.as_bytes();
            capture |= marks_capture(name, is_dir);
        }
    }
    if job_file {
        // Made by a rank of this job since the read above, or not a job's.
        if let Some(job) = read_job(dir) {
            return Look::Job(job);
        }
    }
    match (any, capture) {
        (false, _) => Look::Empty,
        (true, true) => Look::Capture,
        (true, false) => Look::Other,
    }
}

/// Creates `job.json` describing `rank`'s job, unless it exists: true when
/// this call made it.
fn create_job_file(dir: &Path, rank: &Rank) -> Result<bool, LaunchError> {
    let job = JobFile {
        schema: 1,
        launcher: rank.launcher.as_str().to_string(),
        id: rank.job.clone(),
        size: rank.size,
        started_unix: unix_now(),
    };
    let mut bytes = serde_json::to_vec_pretty(&job).unwrap_or_default();
    bytes.push(b'\n');
    // Unique among every rank on every host: the host, the pid and the rank.
    let tmp = dir.join(format!(
        ".job.json.tmp.{}-{}-{}",
        xpu_asm_record::host_name(),
        std::process::id(),
        rank.rank
    ));
    std::fs::write(&tmp, &bytes).map_err(|e| io_error(&tmp, e))?;
    let res = std::fs::hard_link(&tmp, dir.join(JOB_FILE));
    let _ = std::fs::remove_file(&tmp);
    match res {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_error(&dir.join(JOB_FILE), e)),
    }
}

fn describe_job(j: &JobFile) -> String {
    let size = j.size.map_or_else(|| "?".to_string(), |s| s.to_string());
    match &j.id {
        Some(id) => format!("{} job {id} of {size} ranks", j.launcher),
        None => format!("{} job of {size} ranks", j.launcher),
    }
}

/// What [`join`] gives: the folder, and this rank's place in it.
pub struct Joined {
    pub out: OutDir,
    pub rank: Rank,
    pub host: String,
}

/// Makes or joins the capture folder `out` for `rank`'s job; refuses a
/// folder that holds anything else (as a single run does), and a rank
/// number already claimed there (a second run into the folder).
pub fn join(out: Option<&Path>, force: bool, rank: &Rank) -> Result<Joined, LaunchError> {
    let Some(dir) = out else {
        return Err(job_error(format!(
            "this is rank {} of a parallel job ({}): give every rank the same capture folder \
             with -o DIR (on a filesystem all hosts share)",
            rank.rank,
            rank.launcher.as_str()
        )));
    };
    if std::fs::symlink_metadata(dir).is_ok() && !dir.is_dir() {
        return Err(LaunchError::OutNotDir(dir.to_path_buf()));
    }
    let existed = dir.is_dir();
    crate::capture::trust::make_folder(dir).map_err(|e| io_error(dir, e))?;
    launch::check_own("capture folder", dir)?;
    belong_to_job(dir, force, rank)?;
    let host = xpu_asm_record::host_name();
    claim_rank(dir, rank)?;
    for sub in [xpu_asm_record::RECORDS_DIR, xpu_asm_record::DUMPS_DIR] {
        let p = dir.join(sub);
        crate::capture::trust::make_folder(&p).map_err(|e| io_error(&p, e))?;
    }
    launch::check_capture_folders(dir)?;
    let path = std::fs::canonicalize(dir).map_err(|e| io_error(dir, e))?;
    Ok(Joined {
        out: OutDir {
            path,
            created: !existed,
        },
        rank: rank.clone(),
        host,
    })
}

/// Waits until `dir` belongs to `rank`'s job: its `job.json` names the
/// job (made here if the folder is empty); with `force`, rank 0 first
/// clears an earlier capture, leaving other files alone, and the others
/// wait for it.
fn belong_to_job(dir: &Path, force: bool, rank: &Rank) -> Result<(), LaunchError> {
    let waited_since = Instant::now();
    let mut cleared = false;
    let mut saw_capture = false;
    loop {
        let seen = match look(dir) {
            // What this rank's --force left of an earlier capture: the
            // user's own files, kept.
            Look::Other if cleared => Look::Empty,
            seen => seen,
        };
        match seen {
            Look::Job(job) if same_job(dir, &job, rank) => break,
            Look::Job(job) if !force => {
                return Err(job_error(format!(
                    "{} holds the capture of another job ({}); add --force to replace it, \
                     choose another folder with -o, or report on it again with \
                     `xpu-asm-run collect {}`",
                    dir.display(),
                    describe_job(&job),
                    dir.display()
                )))
            }
            Look::Empty => {
                if create_job_file(dir, rank)? {
                    break;
                }
                continue;
            }
            Look::Other if !force || rank.rank == 0 => {
                return Err(LaunchError::OutNotEmpty(dir.to_path_buf()))
            }
            Look::Capture if !force => return Err(LaunchError::OutIsCapture(dir.to_path_buf())),
            // --force: rank 0 clears the folder; the others wait for it.
            Look::Job(_) | Look::Capture if rank.rank == 0 => {
                launch::clear_capture(dir)?;
                cleared = true;
                continue;
            }
            Look::Job(_) | Look::Capture => saw_capture = true,
            // Other files: what rank 0 left of the capture this rank saw,
            // or, at first sight, a folder rank 0 cleared just before (its
            // `job.json` then follows at once) or one that is not a capture.
            Look::Other => {
                if !saw_capture && waited_since.elapsed() > OTHER_GRACE {
                    return Err(LaunchError::OutNotEmpty(dir.to_path_buf()));
                }
            }
        }
        if waited_since.elapsed() > FORCE_WAIT {
            return Err(job_error(format!(
                "{} still holds an earlier capture or other files after {} s; with --force, \
                 rank 0 replaces a capture, and rank 0 did not (is it run under xpu-asm-run, \
                 and does the folder hold files of its own?)",
                dir.display(),
                FORCE_WAIT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Claims `instances/rank-<R>.json` for `rank`: refused when the rank is
/// claimed already (a second run into the folder).
fn claim_rank(dir: &Path, rank: &Rank) -> Result<(), LaunchError> {
    let inst_dir = dir.join(INSTANCES_DIR);
    std::fs::create_dir_all(&inst_dir).map_err(|e| io_error(&inst_dir, e))?;
    let path = instance_path(dir, rank.rank);
    let claim = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    match claim {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let other = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Instance>(&b).ok())
                .map(|i| format!(" (by host {}, pid {:?})", i.host, i.pid))
                .unwrap_or_default();
            return Err(job_error(format!(
                "{} already holds rank {}{other}: it is the capture of another run; choose \
                 another folder with -o, or report on it with `xpu-asm-run collect {}`",
                dir.display(),
                rank.rank,
                dir.display()
            )));
        }
        Err(e) => return Err(io_error(&path, e)),
    }
    Ok(())
}

/// What an instance does once its command has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterEnd {
    /// It is the one that collects.
    Collect,
    /// Other ranks are still running (or another instance collects).
    Done,
    /// The job's size is unknown: `collect DIR` makes the report.
    SizeUnknown,
}

/// Decides, after this rank wrote that it ended, whether it collects: only
/// the one that finds every rank ended and wins the claim.
pub fn after_end(dir: &Path, size: Option<u32>) -> AfterEnd {
    let Some(n) = size else {
        return AfterEnd::SizeUnknown;
    };
    if !all_ended(dir, n) {
        return AfterEnd::Done;
    }
    let claim = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(INSTANCES_DIR).join(COLLECTOR_CLAIM));
    match claim {
        Ok(mut f) => {
            let _ = std::io::Write::write_all(
                &mut f,
                format!("{} {}\n", xpu_asm_record::host_name(), std::process::id()).as_bytes(),
            );
            AfterEnd::Collect
        }
        Err(_) => AfterEnd::Done,
    }
}

/// How the job ended: the first failing rank's status (by rank), else 0.
pub fn job_exit(insts: &[Instance]) -> Exit {
    insts
        .iter()
        .filter_map(|i| i.exit)
        .find(|e| e.status() != 0)
        .unwrap_or(Exit::Code(0))
}

/// `run.json` for the whole job, written by the instance that collects:
/// its command, and the job's exit ([`job_exit`]).
pub fn write_job_run_info(dir: &Path, own: &RunInfo) -> Result<(), CollectError> {
    let insts = instances(dir);
    let mut info = own.clone();
    info.pid = None;
    info.host = None;
    info.exit = Some(job_exit(&insts));
    info.started_unix = read_job(dir).map_or(own.started_unix, |j| j.started_unix);
    write_run_info(dir, &info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::job::write_instance;
    use xpu_asm_record::ranks::Launcher;

    fn rank(r: u32, size: u32, id: Option<&str>) -> Rank {
        Rank {
            launcher: if id.is_some() {
                Launcher::OpenMpi
            } else {
                Launcher::Pmi
            },
            rank: r,
            local_rank: Some(r),
            size: Some(size),
            job: id.map(str::to_string),
        }
    }

    fn end(dir: &Path, r: u32, exit: Exit) {
        write_instance(
            dir,
            &Instance {
                schema: 1,
                rank: r,
                local_rank: None,
                host: "h".into(),
                command: vec!["app".into()],
                pid: Some(100 + r),
                state: "ended".into(),
                exit: Some(exit),
                error: None,
                notices: Vec::new(),
                notices_refused: 0,
            },
        )
        .unwrap();
    }

    #[test]
    fn ranks_of_one_job_share_the_folder_and_the_last_collects_once() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap");
        let ranks: Vec<Rank> = (0..3).map(|r| rank(r, 3, Some("openmpi:7"))).collect();
        // Concurrent joins: all succeed, one job.json.
        std::thread::scope(|s| {
            for r in &ranks {
                let dir = &dir;
                s.spawn(move || join(Some(dir), false, r).unwrap());
            }
        });
        assert_eq!(read_job(&dir).unwrap().id.as_deref(), Some("openmpi:7"));
        end(&dir, 0, Exit::Code(0));
        assert_eq!(after_end(&dir, Some(3)), AfterEnd::Done);
        end(&dir, 2, Exit::Code(3));
        end(&dir, 1, Exit::Signal(9));
        assert_eq!(after_end(&dir, Some(3)), AfterEnd::Collect);
        assert_eq!(after_end(&dir, Some(3)), AfterEnd::Done);
        assert_eq!(job_exit(&instances(&dir)), Exit::Signal(9));
        assert_eq!(crate::capture::waited(&dir).len(), 3);

        // Another job, or the same rank again, is refused.
        let e = join(Some(&dir), false, &rank(0, 3, Some("openmpi:8")))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("another job (openmpi job openmpi:7"), "{e}");
        let again = join(Some(&dir), false, &ranks[1])
            .err()
            .unwrap()
            .to_string();
        assert!(again.contains("already holds rank 1"), "{again}");
    }

    #[test]
    fn hydra_jobs_without_an_id_are_told_apart_by_ranks_and_completion() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap");
        join(Some(&dir), false, &rank(0, 2, None)).unwrap();
        join(Some(&dir), false, &rank(1, 2, None)).unwrap();
        end(&dir, 0, Exit::Code(0));
        end(&dir, 1, Exit::Code(0));
        // Finished: a second run of the same shape is another job.
        let e = join(Some(&dir), false, &rank(0, 2, None))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("another job"), "{e}");
    }

    /// Rank 1 of job `id` joins `dir` with --force while, `ms` later,
    /// `rank_0` does what rank 0 does; rank 1 must have joined.
    fn rank_1_waits_while(dir: &Path, id: &str, ms: u64, rank_0: impl FnOnce()) {
        std::thread::scope(|s| {
            let waiting = s.spawn(|| join(Some(dir), true, &rank(1, 2, Some(id))));
            std::thread::sleep(Duration::from_millis(ms));
            rank_0();
            waiting.join().unwrap().unwrap();
        });
    }

    #[test]
    fn a_single_runs_capture_is_refused_and_force_lets_rank_0_replace_it() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap");
        std::fs::create_dir_all(dir.join("records")).unwrap();
        std::fs::write(dir.join("run.json"), "{}").unwrap();
        let r1 = rank(1, 2, Some("openmpi:9"));
        assert!(matches!(
            join(Some(&dir), false, &r1),
            Err(LaunchError::OutIsCapture(_))
        ));
        rank_1_waits_while(&dir, "openmpi:9", 100, || {
            join(Some(&dir), true, &rank(0, 2, Some("openmpi:9"))).unwrap();
        });
        assert!(!dir.join("run.json").exists());
        assert_eq!(instances(&dir).len(), 0, "claims are empty until written");
        assert!(instance_path(&dir, 0).exists() && instance_path(&dir, 1).exists());
        let other = t.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("notes.txt"), "x").unwrap();
        assert!(matches!(
            join(Some(&other), true, &r1),
            Err(LaunchError::OutNotEmpty(_))
        ));
        assert!(join(None, false, &r1)
            .err()
            .unwrap()
            .to_string()
            .contains("-o DIR"));
    }

    #[test]
    fn force_keeps_other_files_and_every_rank_joins() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap");
        std::fs::create_dir_all(dir.join("records")).unwrap();
        std::fs::write(dir.join("run.json"), "{}").unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        rank_1_waits_while(&dir, "slurm:4", 100, || {
            join(Some(&dir), true, &rank(0, 2, Some("slurm:4"))).unwrap();
        });
        assert_eq!(
            std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
            "mine"
        );
        assert!(!dir.join("run.json").exists());
        assert!(instance_path(&dir, 0).exists() && instance_path(&dir, 1).exists());
    }

    #[test]
    fn a_rank_that_finds_a_folder_rank_0_just_cleared_waits_for_its_job() {
        // What rank 0's --force leaves for a moment: no capture, no job.json
        // yet, the user's own files. Rank 1 must wait, not refuse it.
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        rank_1_waits_while(&dir, "slurm:5", 300, || {
            assert!(create_job_file(&dir, &rank(0, 2, Some("slurm:5"))).unwrap());
        });
        assert!(instance_path(&dir, 1).exists());
    }

    #[test]
    fn an_unreadable_job_file_is_an_earlier_capture_not_a_wait() {
        // Before, a `job.json` that did not parse was waited on forever.
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(JOB_FILE), "{not json").unwrap();
        let r1 = rank(1, 2, Some("slurm:6"));
        assert!(matches!(
            join(Some(&dir), false, &r1),
            Err(LaunchError::OutIsCapture(_))
        ));
        join(Some(&dir), true, &rank(0, 2, Some("slurm:6"))).unwrap();
        join(Some(&dir), true, &r1).unwrap();
        assert!(read_job(&dir).is_some());
    }

    #[test]
    fn launchers_are_not_ranks() {
        assert!(is_launcher(OsStr::new("/usr/bin/mpirun.openmpi")));
        assert!(is_launcher(OsStr::new("srun")));
        assert!(!is_launcher(OsStr::new("./app")));
    }
}
