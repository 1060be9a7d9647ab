//! `xpu-asm-run -- cmd`: the command run under the interposer, then
//! collected (for a job's rank: by the last rank to end).

use super::collect::collect_and_print;
use super::{IsaMode, ReportArgs, RunArgs};
use crate::capture::job::{write_instance, Instance};
use crate::capture::layout::CollectError;
use crate::capture::run::{unix_now, write_run_info, Exit, RunInfo};
use crate::prune::Keep;
use crate::run::emulate;
use crate::run::job::{self, Joined};
use crate::run::launch::{self, LaunchError, OutDir};
use crate::run::{forward, notices::Notices};
use std::ffi::OsString;
use std::path::Path;
use xpu_asm_isa::native::iga::only_igc;

/// `xpu-asm-run -- cmd`: runs the command under the interposer, then
/// collects (for a job's rank: the last rank to end collects).
pub fn main(a: &RunArgs) -> Result<i32, LaunchError> {
    launch::raise_fd_limit();
    let resolved = RunArgs {
        isa: a.isa.resolve(
            only_igc(),
            // Dumps asked for: by the user's IGC variable, or by keeping
            // more of them than the default does.
            launch::users_dump_enable() || a.report.keep != Keep::Asm,
        ),
        ..a.clone()
    };
    let a = &resolved;
    let interposer = launch::resolve_interposer(
        a.interposer.as_deref(),
        std::env::var_os(launch::INTERPOSER_ENV),
        std::env::current_exe().ok(),
        a.report.quiet,
    )?;
    check_devices(a)?;
    // `command` is required by clap: there is a first element.
    let cmd0 = a.command.first().cloned().unwrap_or_default();
    launch::check_other_folders()?;
    // One instance per rank: the ranks of the job share the folder.
    let joined = match job::this_rank(&cmd0) {
        Some(rank) => Some(job::join(a.out.as_deref(), a.force, &rank)?),
        None => None,
    };
    let out = match &joined {
        Some(j) => j.out.clone(),
        None => launch::prepare_out_dir(a.out.as_deref(), a.force, &cmd0)?,
    };
    let dir = out.path.clone();
    let interposer = interposer.into_path(&dir, a.report.quiet)?;
    let mut info = run_info(a, &interposer);
    let save = |info: &RunInfo| save_run_info(&dir, joined.as_ref(), info);
    save(&info)?;
    let (command, mut env, unset) = child_command(a, &interposer, &dir);
    let notices = listen_for_notices(&mut env);
    warn_untraceable(&cmd0);
    launch::install_signal_handlers();
    // A rank of a job does not collect: the last one reads what all wrote.
    let warm = match joined {
        None => crate::analysis::code::warm_up(&dir),
        Some(_) => None,
    };
    let folder_at_start = folder_id(&dir);
    let ran = launch::spawn_and_wait(&command, &env, &unset);
    if let Some(w) = warm {
        w.finish();
    }
    let (pid, exit) = match ran {
        Ok(r) => r,
        Err(e) => return not_started(e, a, &out, joined.as_ref(), &mut info, &save),
    };
    launch::enter_collecting();
    after_the_command(&dir, folder_at_start);
    command_ended(&mut info, pid, exit, notices);
    if let Err(e) = save(&info) {
        eprintln!("xpu-asm-run: {e}");
    }
    let args = &a.report;
    if let Some(j) = &joined {
        if !rank_collects(j, &dir, &info, exit, args) {
            return Ok(exit.status());
        }
    } else if !args.quiet {
        eprintln!(
            "xpu-asm-run: the command {}; collecting into {}",
            exit.describe(),
            dir.display()
        );
    }
    if collect_and_print(&dir, args) && !args.quiet {
        hint_no_device();
    }
    if !a.port_to.is_empty() {
        super::port::after_run(&dir, &a.port_to, a.interposer.clone(), args.quiet);
    }
    Ok(exit.status())
}

/// After a run that launched nothing on no device: the hint, where this
/// host has no Intel GPU, that `--emulate` compiles without one.
fn hint_no_device() {
    let gpu = emulate::has_intel_gpu(Path::new("/sys"));
    if let Some(hint) = emulate::no_device_hint(gpu, emulate::neo_devices().as_ref()) {
        eprintln!("xpu-asm-run: {hint}");
    }
}

/// `--emulate`'s device and `--port-to`'s products, each one this
/// system's NEO knows (else the list it has), before the command starts.
fn check_devices(a: &RunArgs) -> Result<(), LaunchError> {
    let port_to = a
        .port_to
        .iter()
        .flat_map(|t| t.split(','))
        .map(|d| ("--port-to", d.trim().to_ascii_lowercase()));
    let emulate = a.emulate.iter().map(|d| ("--emulate", d.clone()));
    for (option, dev) in emulate.chain(port_to) {
        if !dev.is_empty() {
            launch::check_emulated_device(
                option,
                &dev,
                emulate::neo_devices().as_ref(),
                emulate::neo_version,
            )?;
        }
    }
    Ok(())
}

/// The socket for notices, named (with the run's key) in `env`.
fn listen_for_notices(env: &mut Vec<(OsString, OsString)>) -> Option<Notices> {
    let notices = Notices::listen()?;
    env.push((xpu_asm_record::NOTIFY_ENV.into(), notices.name().into()));
    env.push((xpu_asm_record::NOTIFY_KEY_ENV.into(), notices.key().into()));
    Some(notices)
}

/// What `run.json` says once the command ended.
fn command_ended(info: &mut RunInfo, pid: u32, exit: Exit, notices: Option<Notices>) {
    info.state = "ended".into();
    let got = notices.map(|n| n.take()).unwrap_or_default();
    info.notices = got.notices;
    info.notices_refused = got.refused;
    info.pid = Some(pid);
    info.exit = Some(exit);
    info.ended_unix = Some(unix_now());
}

/// After the command: a capture folder removed while it ran is made
/// again (what the processes still held, they wrote again; the rest is
/// gone, and the user is told), and what its processes left in node-local
/// memory is written into the capture (what cannot be, the collection
/// reads where it is, and says so).
fn after_the_command(dir: &Path, at_start: Option<(u64, u64)>) {
    folder_still_there(dir, at_start);
    let _ = crate::capture::staged::finish_here(dir);
}

fn folder_still_there(dir: &Path, at_start: Option<(u64, u64)>) {
    if folder_id(dir) != at_start {
        eprintln!(
            "xpu-asm-run: warning: the capture folder {} was removed while the command ran; \
             the records of processes that had ended before are lost",
            dir.display()
        );
        let _ = std::fs::create_dir_all(dir);
    }
}

/// Which folder `dir` is (device, inode), when it is there.
fn folder_id(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

fn warn_untraceable(cmd0: &std::ffi::OsStr) {
    if let Some(why) = launch::untraceable(cmd0) {
        eprintln!("xpu-asm-run: warning: {why}; running it anyway");
    }
}

/// `run.json` as the command starts.
fn run_info(a: &RunArgs, interposer: &Path) -> RunInfo {
    RunInfo {
        schema: 1,
        command: a
            .command
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        interposer: interposer.display().to_string(),
        emulate: a.emulate.clone(),
        isa: (a.isa == IsaMode::Binary).then(|| "binary".to_string()),
        state: "running".into(),
        pid: None,
        host: Some(xpu_asm_record::host_name()),
        exit: None,
        error: None,
        started_unix: unix_now(),
        ended_unix: None,
        notices: Vec::new(),
        notices_refused: 0,
    }
}

/// Saves where the run stands: `run.json`, or a rank's instance file.
fn save_run_info(dir: &Path, joined: Option<&Joined>, info: &RunInfo) -> Result<(), CollectError> {
    match joined {
        Some(j) => write_instance(
            dir,
            &Instance {
                schema: 1,
                rank: j.rank.rank,
                local_rank: j.rank.local_rank,
                host: j.host.clone(),
                command: info.command.clone(),
                pid: info.pid,
                state: info.state.clone(),
                exit: info.exit,
                error: info.error.clone(),
                notices: info.notices.clone(),
                notices_refused: info.notices_refused,
            },
        ),
        None => write_run_info(dir, info),
    }
}

/// The command to run (the user's, or a launcher's with forwarding options
/// added), the variables to set and those to unset.
fn child_command(a: &RunArgs, interposer: &Path, dir: &Path) -> ChildCommand {
    let mut env = launch::child_env(
        interposer,
        dir,
        std::env::var_os("LD_PRELOAD").as_deref(),
        a.emulate.as_deref(),
    );
    let mut unset = launch::inherited_owned_vars();
    match a.isa {
        IsaMode::Binary => env.push((xpu_asm_record::ISA_ENV.into(), "binary".into())),
        IsaMode::Dump | IsaMode::Auto => unset.push(xpu_asm_record::ISA_ENV.into()),
    }
    let time = xpu_asm_record::times::TIME_ENV;
    match a.time {
        Some(t) => env.push((
            time.into(),
            t.env_value(std::env::var(time).ok().as_deref()).into(),
        )),
        None => unset.push(time.into()),
    }
    // IGC 1 alone here: its light dumps (record::IGC_ENV); the
    // interposer falls back to the full ones wherever this is not set.
    let igc1 = a.isa != IsaMode::Binary && a.report.keep != Keep::All && only_igc() == Some(1);
    match igc1 {
        true => env.push((xpu_asm_record::IGC_ENV.into(), "1".into())),
        false => unset.push(xpu_asm_record::IGC_ENV.into()),
    }
    // `--keep all` keeps every file IGC wrote: IGC then writes them all.
    match a.report.keep {
        Keep::All => env.push((xpu_asm_record::DUMPS_ENV.into(), "all".into())),
        _ => unset.push(xpu_asm_record::DUMPS_ENV.into()),
    }
    let mut command = a.command.clone();
    match forward::plan(&command, &env, |k| std::env::var(k).ok()) {
        forward::Plan::Nothing => {}
        forward::Plan::Env(more) => env.extend(more),
        forward::Plan::Args(cmd, note) => {
            command = cmd;
            if !a.report.quiet {
                eprintln!("xpu-asm-run: {note}");
            }
        }
        forward::Plan::Warn(why) => eprintln!("xpu-asm-run: warning: {why}"),
    }
    (command, env, unset)
}

/// A command, the variables set for it, and those removed.
type ChildCommand = (Vec<OsString>, Vec<(OsString, OsString)>, Vec<OsString>);

/// The command could not start: no empty capture is left behind a typo;
/// a rank says so in its file, and the last rank to end collects, even one
/// that never started.
fn not_started(
    e: LaunchError,
    a: &RunArgs,
    out: &OutDir,
    joined: Option<&Joined>,
    info: &mut RunInfo,
    save: &dyn Fn(&RunInfo) -> Result<(), CollectError>,
) -> Result<i32, LaunchError> {
    let dir = &out.path;
    if out.created && joined.is_none() {
        let _ = std::fs::remove_dir_all(dir);
    } else {
        info.state = "not-started".into();
        info.error = Some(e.to_string());
        info.ended_unix = Some(unix_now());
        if joined.is_some() {
            // The job's status says a rank could not start.
            info.exit = Some(Exit::Code(e.exit_code()));
        }
        let _ = save(info);
    }
    if let Some(j) = joined {
        if job::after_end(dir, j.rank.size) == job::AfterEnd::Collect {
            eprintln!("xpu-asm-run: {e}");
            let _ = job::write_job_run_info(dir, info);
            collect_and_print(dir, &a.report);
            return Ok(e.exit_code());
        }
    }
    Err(e)
}

/// After a rank's command ended: whether this rank collects (every rank
/// has ended and it won the claim), having written the job's `run.json`.
fn rank_collects(j: &Joined, dir: &Path, info: &RunInfo, exit: Exit, args: &ReportArgs) -> bool {
    match job::after_end(dir, j.rank.size) {
        job::AfterEnd::Collect => {
            if let Err(e) = job::write_job_run_info(dir, info) {
                eprintln!("xpu-asm-run: {e}");
            }
            if !args.quiet {
                eprintln!(
                    "xpu-asm-run: every rank has ended (rank {}, the last, {}); collecting into {}",
                    j.rank.rank,
                    exit.describe(),
                    dir.display()
                );
            }
            true
        }
        job::AfterEnd::Done => false,
        job::AfterEnd::SizeUnknown => {
            if j.rank.rank == 0 && !args.quiet {
                eprintln!(
                    "xpu-asm-run: the launcher does not say how many ranks the job has: \
                     run `xpu-asm-run collect {}` once every rank has ended",
                    dir.display()
                );
            }
            false
        }
    }
}
