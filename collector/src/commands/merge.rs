//! `xpu-asm-run merge -o OUT DIR...`: one capture made of several
//! (node-local folders brought to one place, separate runs of one job).
//!
//! Records, dump folders and rank files are copied (hard links where the
//! filesystem allows). Their names carry host, pid and a per-process token,
//! so they seldom meet; a name already taken by different content gets a
//! `~<input number>` suffix, and a renamed dump folder is renamed in the
//! record that names it too. The same file met twice (one folder given
//! twice) is kept once. What the inputs' first collection saved before
//! pruning (`collect.json`) is carried over, and each input's `run.json`
//! is kept in `merged.json`, so `collect OUT` reports on everything.

use super::{collect, MergeArgs};
use crate::capture::files::{link_or_copy, usage, write_atomic};
use crate::capture::job;
use crate::capture::layout::{
    is_capture, INSTANCES_DIR, JOB_FILE, MERGED_FILE, RUN_FILE, STATE_FILE,
};
use crate::capture::merged::{Merged, MergedInput};
use crate::capture::run::{read_run_info, unix_now, Exit, RunInfo};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use xpu_asm_record::{DUMPS_DIR, MODULES_DIR, RECORDS_DIR};

/// `merge -o OUT DIR...`, then `collect OUT`: its exit status.
pub fn main(a: &MergeArgs) -> i32 {
    let (out, dirs, args) = (&a.out, &a.dirs, &a.report);
    match merge(out, dirs) {
        Ok(m) => {
            if !args.quiet {
                let records: u64 = m.inputs.iter().map(|i| i.records).sum();
                eprintln!(
                    "xpu-asm-run: merged {} captures ({records} process records) into {}",
                    m.inputs.len(),
                    out.display()
                );
                for r in &m.renamed {
                    eprintln!("xpu-asm-run: renamed (the name was taken): {r}");
                }
            }
            collect::main(out, args)
        }
        Err(e) => {
            eprintln!("xpu-asm-run: {e}");
            1
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MergeError(pub String);

fn err(what: impl std::fmt::Display) -> MergeError {
    MergeError(what.to_string())
}

/// Hard link, else copy.
fn put(src: &Path, dest: &Path) -> Result<(), MergeError> {
    link_or_copy(src, dest).map_err(|e| {
        err(format!(
            "cannot copy {} to {}: {e}",
            src.display(),
            dest.display()
        ))
    })
}

fn copy_tree(src: &Path, dest: &Path) -> Result<(), MergeError> {
    std::fs::create_dir_all(dest)
        .map_err(|e| err(format!("cannot create {}: {e}", dest.display())))?;
    for e in walkdir::WalkDir::new(src).min_depth(1) {
        let e = e.map_err(|e| err(format!("cannot read {}: {e}", src.display())))?;
        let rel = e.path().strip_prefix(src).unwrap_or(e.path());
        let to = dest.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to)
                .map_err(|e| err(format!("cannot create {}: {e}", to.display())))?;
        } else if e.file_type().is_file() {
            put(e.path(), &to)?;
        }
    }
    Ok(())
}

fn same_file_content(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// A name not taken in `dir`: `name`, else `name~i`, `name~i.2`, ...
fn free_name(dir: &Path, stem: &str, ext: &str, i: usize) -> String {
    let mut n = format!("{stem}~{i}");
    let mut k = 2;
    while dir.join(format!("{n}{ext}")).exists() {
        n = format!("{stem}~{i}.{k}");
        k += 1;
    }
    n
}

/// The record's header with `dump_dir` replaced.
fn rewrite_dump_dir(events: &[u8], new_dir: &str) -> Option<Vec<u8>> {
    let end = events.iter().position(|b| *b == b'\n')?;
    let mut header: Value = serde_json::from_slice(&events[..end]).ok()?;
    header
        .as_object_mut()?
        .insert("dump_dir".into(), Value::String(new_dir.into()));
    let mut out = serde_json::to_vec(&header).ok()?;
    out.extend_from_slice(&events[end..]);
    Some(out)
}

fn header_dump_dir(events: &[u8]) -> Option<String> {
    let end = events
        .iter()
        .position(|b| *b == b'\n')
        .unwrap_or(events.len());
    let header: Value = serde_json::from_slice(&events[..end]).ok()?;
    Some(header.get("dump_dir")?.as_str()?.to_string())
}

/// Merges `inputs` into the new capture folder `out`.
pub fn merge(out: &Path, inputs: &[PathBuf]) -> Result<Merged, MergeError> {
    check_inputs(out, inputs)?;
    let to = Output::make(out)?;
    let mut merged = Merged {
        schema: 1,
        inputs: Vec::new(),
        renamed: Vec::new(),
    };
    let mut carried = Carried::default();
    for (n, input) in inputs.iter().enumerate() {
        let info = merge_input(input, n + 1, &to, &mut merged.renamed, &mut carried)?;
        merged.inputs.push(info);
    }
    write_json(&out.join(STATE_FILE), &carried.state())?;
    write_json(&out.join(MERGED_FILE), &merged)?;
    write_json(&out.join(RUN_FILE), &run_info(&merged, &carried.exits))?;
    Ok(merged)
}

/// Refuses no input, an input that is not a capture, and an output that
/// is not new.
fn check_inputs(out: &Path, inputs: &[PathBuf]) -> Result<(), MergeError> {
    if inputs.is_empty() {
        return Err(err(
            "give the capture folders to merge: merge -o OUT DIR...",
        ));
    }
    for i in inputs {
        if !i.is_dir() {
            return Err(err(format!("{}: no such folder", i.display())));
        }
        if !is_capture(i) {
            return Err(err(format!(
                "{} is not an xpu-asm capture (no records/, run.json or report.json)",
                i.display()
            )));
        }
    }
    if out.exists() {
        let empty = std::fs::read_dir(out)
            .map(|mut r| r.next().is_none())
            .unwrap_or(false);
        if !empty {
            return Err(err(format!(
                "{} exists and is not empty; merge writes a new capture: choose another -o",
                out.display()
            )));
        }
    }
    Ok(())
}

/// The folders of the new capture.
struct Output {
    out: PathBuf,
    records: PathBuf,
    dumps: PathBuf,
    instances: PathBuf,
}

impl Output {
    fn make(out: &Path) -> Result<Output, MergeError> {
        let o = Output {
            out: out.to_path_buf(),
            records: out.join(RECORDS_DIR),
            dumps: out.join(DUMPS_DIR),
            instances: out.join(INSTANCES_DIR),
        };
        for d in [&o.records, &o.dumps, &o.instances] {
            std::fs::create_dir_all(d)
                .map_err(|e| err(format!("cannot create {}: {e}", d.display())))?;
        }
        Ok(o)
    }
}

/// What the inputs' files say that the merged capture's `collect.json`
/// and `run.json` carry over.
#[derive(Default)]
struct Carried {
    final_binary: BTreeMap<String, Value>,
    before_bytes: u64,
    before_files: u64,
    exits: Vec<Exit>,
}

impl Carried {
    fn state(&self) -> Value {
        serde_json::json!({
            "schema": 1,
            "dumps_before": {"bytes": self.before_bytes, "files": self.before_files},
            "final_binary": self.final_binary,
        })
    }
}

/// Copies input number `n` into `to`: its dump folders first (the records'
/// `dump_dir` follows their names), module binaries, records, rank files;
/// and carries over how its commands ended and what its first collection
/// saved.
fn merge_input(
    input: &Path,
    n: usize,
    to: &Output,
    renamed: &mut Vec<String>,
    carried: &mut Carried,
) -> Result<MergedInput, MergeError> {
    let mut info = MergedInput {
        path: input.display().to_string(),
        run: read_run_info(input, &mut Vec::new()),
        job: std::fs::read(input.join(JOB_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok()),
        records: 0,
        dump_folders: 0,
    };
    let dump_names = copy_dump_folders(input, n, &to.dumps, renamed, &mut info)?;
    copy_module_binaries(input, &to.out)?;
    copy_records(input, n, &to.records, &dump_names, renamed, &mut info)?;
    copy_instances(input, n, &to.instances, &mut carried.exits)?;
    if let Some(e) = info.run.as_ref().and_then(|r| r.exit) {
        carried.exits.push(e);
    }
    carry_state(input, &dump_names, carried);
    Ok(info)
}

/// Copies the input's dump folders into `dumps_out`, renaming one whose
/// name another input's different folder has; returns the new name of each.
fn copy_dump_folders(
    input: &Path,
    n: usize,
    dumps_out: &Path,
    renamed: &mut Vec<String>,
    info: &mut MergedInput,
) -> Result<HashMap<String, String>, MergeError> {
    let mut dump_names: HashMap<String, String> = HashMap::new();
    let dumps_in = input.join(DUMPS_DIR);
    let Ok(rd) = std::fs::read_dir(&dumps_in) else {
        return Ok(dump_names);
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let src = dumps_in.join(&name);
        let mut to = name.clone();
        if dumps_out.join(&to).exists() {
            if dirs_equal(&src, &dumps_out.join(&to)) {
                dump_names.insert(name.clone(), to);
                continue;
            }
            to = free_name(dumps_out, &name, "", n);
            renamed.push(format!(
                "{}/{DUMPS_DIR}/{name} -> {DUMPS_DIR}/{to}",
                input.display()
            ));
        }
        copy_tree(&src, &dumps_out.join(&to))?;
        info.dump_folders += 1;
        dump_names.insert(name, to);
    }
    Ok(dump_names)
}

/// Module binaries are named by their content's SHA-256: one copy of each
/// serves every input.
fn copy_module_binaries(input: &Path, out: &Path) -> Result<(), MergeError> {
    let Ok(rd) = std::fs::read_dir(input.join(MODULES_DIR)) else {
        return Ok(());
    };
    let modules_out = out.join(MODULES_DIR);
    std::fs::create_dir_all(&modules_out)
        .map_err(|e| err(format!("cannot create {}: {e}", modules_out.display())))?;
    for e in rd.filter_map(|e| e.ok()) {
        let to = modules_out.join(e.file_name());
        if e.file_type().is_ok_and(|t| t.is_file()) && !to.exists() {
            put(&e.path(), &to)?;
        }
    }
    Ok(())
}

/// Copies the input's records into `records_out`, each naming its dump
/// folder by its new name; the same record met twice is kept once.
fn copy_records(
    input: &Path,
    n: usize,
    records_out: &Path,
    dump_names: &HashMap<String, String>,
    renamed: &mut Vec<String>,
    info: &mut MergedInput,
) -> Result<(), MergeError> {
    let records_in = input.join(RECORDS_DIR);
    let mut events: Vec<PathBuf> = std::fs::read_dir(&records_in)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "events"))
                .collect()
        })
        .unwrap_or_default();
    events.sort();
    for ev in events {
        let stem = ev
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let counts = ev.with_extension("counts");
        let bytes =
            std::fs::read(&ev).map_err(|e| err(format!("cannot read {}: {e}", ev.display())))?;
        let bytes_out = with_dump_dir_renamed(&bytes, dump_names);
        let mut to = stem.clone();
        let dest = records_out.join(format!("{to}.events"));
        if dest.exists() {
            if std::fs::read(&dest).is_ok_and(|b| b == bytes_out)
                && same_file_content(&counts, &records_out.join(format!("{to}.counts")))
            {
                continue;
            }
            to = free_name(records_out, &stem, ".events", n);
            renamed.push(format!(
                "{}/{RECORDS_DIR}/{stem}.events -> {RECORDS_DIR}/{to}.events",
                input.display()
            ));
        }
        let dest = records_out.join(format!("{to}.events"));
        if bytes_out == bytes {
            put(&ev, &dest)?;
        } else {
            std::fs::write(&dest, &bytes_out)
                .map_err(|e| err(format!("cannot write {}: {e}", dest.display())))?;
        }
        if counts.is_file() {
            put(&counts, &records_out.join(format!("{to}.counts")))?;
        }
        info.records += 1;
    }
    Ok(())
}

/// A record's events, its header's `dump_dir` following its folder's new
/// name.
fn with_dump_dir_renamed(bytes: &[u8], dump_names: &HashMap<String, String>) -> Vec<u8> {
    let Some(dd) = header_dump_dir(bytes) else {
        return bytes.to_vec();
    };
    let moved = dd
        .strip_prefix(&format!("{DUMPS_DIR}/"))
        .and_then(|d| dump_names.get(d))
        .map(|to| format!("{DUMPS_DIR}/{to}"))
        .filter(|to| *to != dd);
    match moved {
        Some(to) => rewrite_dump_dir(bytes, &to).unwrap_or_else(|| bytes.to_vec()),
        None => bytes.to_vec(),
    }
}

/// Copies the input's rank files, and how their commands ended.
fn copy_instances(
    input: &Path,
    n: usize,
    inst_out: &Path,
    exits: &mut Vec<Exit>,
) -> Result<(), MergeError> {
    for inst in job::instances(input) {
        if let Some(e) = inst.exit {
            exits.push(e);
        }
        let mut name = format!("rank-{:06}", inst.rank);
        if inst_out.join(format!("{name}.json")).exists() {
            name = free_name(inst_out, &name, ".json", n);
        }
        write_json(&inst_out.join(format!("{name}.json")), &inst)?;
    }
    Ok(())
}

/// What the input's first collection read before pruning: its dumps' size
/// then (else now), and its final-binary verdicts by their files' new paths.
fn carry_state(input: &Path, dump_names: &HashMap<String, String>, carried: &mut Carried) {
    let state: Option<Value> = std::fs::read(input.join(STATE_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let before = state.as_ref().and_then(|s| s.get("dumps_before"));
    match before {
        Some(b) => {
            carried.before_bytes += b.get("bytes").and_then(Value::as_u64).unwrap_or(0);
            carried.before_files += b.get("files").and_then(Value::as_u64).unwrap_or(0);
        }
        None => {
            let u = usage(&input.join(DUMPS_DIR));
            carried.before_bytes += u.bytes;
            carried.before_files += u.files;
        }
    }
    let Some(fb) = state
        .as_ref()
        .and_then(|s| s.get("final_binary"))
        .and_then(Value::as_object)
    else {
        return;
    };
    for (path, v) in fb {
        let renamed = path
            .strip_prefix(&format!("{DUMPS_DIR}/"))
            .and_then(|rest| {
                let (d, file) = rest.split_once('/')?;
                Some(format!("{DUMPS_DIR}/{}/{file}", dump_names.get(d)?))
            })
            .unwrap_or_else(|| path.clone());
        carried.final_binary.insert(renamed, v.clone());
    }
}

/// `run.json` of the merged capture: the command as the first input ran
/// it; the exit of the first that failed.
fn run_info(merged: &Merged, exits: &[Exit]) -> RunInfo {
    let first = merged.inputs.iter().find_map(|i| i.run.clone());
    RunInfo {
        schema: 1,
        command: first
            .as_ref()
            .map(|r| r.command.clone())
            .unwrap_or_default(),
        cwd: first.as_ref().map(|r| r.cwd.clone()).unwrap_or_default(),
        interposer: first
            .as_ref()
            .map(|r| r.interposer.clone())
            .unwrap_or_default(),
        emulate: first.as_ref().and_then(|r| r.emulate.clone()),
        isa: first.as_ref().and_then(|r| r.isa.clone()),
        state: "ended".into(),
        pid: None,
        host: None,
        exit: Some(
            exits
                .iter()
                .copied()
                .find(|e| e.status() != 0)
                .unwrap_or(Exit::Code(0)),
        ),
        error: None,
        started_unix: merged
            .inputs
            .iter()
            .filter_map(|i| i.run.as_ref().map(|r| r.started_unix))
            .min()
            .unwrap_or_else(unix_now),
        ended_unix: Some(unix_now()),
        notices: merged
            .inputs
            .iter()
            .filter_map(|i| i.run.as_ref())
            .flat_map(|r| r.notices.iter().cloned())
            .collect(),
        notices_refused: merged
            .inputs
            .iter()
            .filter_map(|i| i.run.as_ref())
            .map(|r| r.notices_refused)
            .sum(),
    }
}

/// Pretty JSON and a newline at `path`.
fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), MergeError> {
    let mut json = serde_json::to_vec_pretty(v).unwrap_or_default();
    json.push(b'\n');
    write_atomic(path, &json).map_err(err)
}

/// Whether two folders hold the same files with the same contents.
fn dirs_equal(a: &Path, b: &Path) -> bool {
    let list = |d: &Path| -> Vec<(PathBuf, u64)> {
        let mut v: Vec<(PathBuf, u64)> = walkdir::WalkDir::new(d)
            .min_depth(1)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                (
                    e.path().strip_prefix(d).unwrap_or(e.path()).to_path_buf(),
                    e.metadata().map(|m| m.len()).unwrap_or(0),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (la, lb) = (list(a), list(b));
    la == lb
        && la
            .iter()
            .all(|(rel, _)| same_file_content(&a.join(rel), &b.join(rel)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(dir: &Path, stem: &str, payload: &str) {
        std::fs::create_dir_all(dir.join("records")).unwrap();
        std::fs::create_dir_all(dir.join("dumps").join(stem)).unwrap();
        std::fs::write(dir.join("dumps").join(stem).join("x.asm"), payload).unwrap();
        std::fs::write(
            dir.join("records").join(format!("{stem}.events")),
            format!(
                "{{\"record\":\"xpu-asm\",\"version\":2,\"type\":\"process\",\"pid\":1,\"host\":\"h\",\"dump_dir\":\"dumps/{stem}\"}}\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.join("records").join(format!("{stem}.counts")), payload).unwrap();
    }

    #[test]
    fn same_names_with_other_contents_are_renamed_and_duplicates_kept_once() {
        let t = tempfile::tempdir().unwrap();
        let (a, b, out) = (t.path().join("a"), t.path().join("b"), t.path().join("out"));
        capture(&a, "h-1", "first");
        capture(&b, "h-1", "second");
        let m = merge(&out, &[a.clone(), b.clone(), a.clone()]).unwrap();
        assert_eq!(m.renamed.len(), 2, "{:?}", m.renamed);
        let ev = std::fs::read_to_string(out.join("records/h-1~2.events")).unwrap();
        assert!(ev.contains("\"dump_dir\":\"dumps/h-1~2\""), "{ev}");
        assert_eq!(
            std::fs::read_to_string(out.join("dumps/h-1~2/x.asm")).unwrap(),
            "second"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("dumps/h-1/x.asm")).unwrap(),
            "first"
        );
        // The third input (the first again) added nothing.
        assert_eq!(std::fs::read_dir(out.join("records")).unwrap().count(), 4);
        assert_eq!(m.inputs[2].records, 0);
        // What the inputs' collections saved follows the renamed folders.
        let t2 = tempfile::tempdir().unwrap();
        let (c, d, out2) = (
            t2.path().join("c"),
            t2.path().join("d"),
            t2.path().join("o"),
        );
        capture(&c, "h-1", "first");
        capture(&d, "h-1", "second");
        std::fs::write(
            d.join(STATE_FILE),
            r#"{"schema":1,"dumps_before":{"bytes":1000,"files":7},"final_binary":{"dumps/h-1/x.asm":true}}"#,
        )
        .unwrap();
        merge(&out2, &[c, d]).unwrap();
        let state: Value =
            serde_json::from_slice(&std::fs::read(out2.join(STATE_FILE)).unwrap()).unwrap();
        assert_eq!(
            state["final_binary"],
            serde_json::json!({"dumps/h-1~2/x.asm": true})
        );
        // c was never collected: its dumps as they are (one 5-byte file).
        assert_eq!(
            state["dumps_before"],
            serde_json::json!({"bytes": 1005, "files": 8})
        );
        // The output is new, never overwritten.
        assert!(merge(&out, &[a]).unwrap_err().0.contains("not empty"));
        assert!(merge(&t.path().join("o2"), &[t.path().join("none")])
            .unwrap_err()
            .0
            .contains("no such folder"));
    }
}
