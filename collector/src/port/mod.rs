//! Porting a capture to other products: every launched kernel's module
//! compiled for each product the way that product's driver compiles it,
//! and reported as a run on it would be.
//!
//! For each product, `xpu-asm-run` runs itself as a child
//! (`xpu-asm-run __port PLAN`, [`replay`]) under the interposer, with
//! NEO's no-hardware variables for that product (`--emulate`'s) and the
//! capture's ISA mode: the child creates each module through the real
//! Level Zero loader and driver with the recorded SPIR-V, build flags and
//! specialization constants ([`plan`]), and each launched kernel in it.
//! NEO adds its internal options for the product and IGC compiles, as in
//! a run of the program on that product; the interposer records the
//! modules, their binaries and IGC's dumps into `DIR/port/<product>/`, a
//! capture folder. The launch counts of the run are then written into its
//! counts files (kernel by kernel, by module and name), and it is
//! collected like any capture: `report.json`, `asm/`, `report.html`.

pub mod cl;
pub mod plan;
pub mod replay;

use crate::capture::run::{unix_now, write_run_info, RunInfo};
use crate::collect::{collect, Options};
use crate::report::Report;
use crate::run::launch;
use plan::{Plan, PlanModule, Ported};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The folder of the ports, in the capture folder.
pub const PORT_DIR: &str = "port";

/// How to port.
pub struct PortOptions {
    /// This `xpu-asm-run` (the child runs it).
    pub exe: PathBuf,
    /// The interposer to preload.
    pub interposer: PathBuf,
    /// Children at most at once, over all products.
    pub jobs: usize,
    /// How to collect each product's capture.
    pub collect: Options,
}

/// One product's port.
pub struct ProductPort {
    pub product: String,
    /// `DIR/port/<product>`.
    pub dir: PathBuf,
    /// Its report, or why there is none.
    pub report: Result<Report, String>,
    /// Each module key's status (`built`, or the driver's words).
    pub statuses: BTreeMap<String, String>,
    /// Seconds from its first child's start to its report.
    pub seconds: f64,
}

/// The ports of one capture.
pub struct PortResult {
    pub ported: Ported,
    pub products: Vec<ProductPort>,
}

/// Ports the capture `dir` to each of `products`.
pub fn port(dir: &Path, products: &[String], opts: &PortOptions) -> Result<PortResult, String> {
    // The children run in their own folders: every path they get is whole.
    let dir = &std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let root = own_port_folder(dir)?;
    let records = xpu_asm_record::read::read_dir(&dir.join(xpu_asm_record::RECORDS_DIR))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let run = crate::capture::run::read_run_info(dir, &mut Vec::new());
    let binary = run.as_ref().and_then(|r| r.isa.as_deref()) == Some("binary")
        || records.iter().any(|r| r.isa_binary);
    let ported = plan::plan(dir, &records, &root.join("spirv"));
    let users_env: Vec<(OsString, OsString)> = records
        .first()
        .map(|r| {
            r.env
                .iter()
                .filter(|e| e.by_user)
                .map(|e| (e.name.clone().into(), e.value.clone().into()))
                .collect()
        })
        .unwrap_or_default();
    let per_product = opts.jobs.div_ceil(products.len().max(1)).max(1);
    let job = Job {
        ported: &ported,
        opts,
        binary,
        users_env: &users_env,
        children: per_product,
    };
    let results: Vec<ProductPort> = std::thread::scope(|s| {
        let handles: Vec<_> = products
            .iter()
            .map(|p| {
                let job = &job;
                let pdir = root.join(p);
                s.spawn(move || job.product(p, &pdir))
            })
            .collect();
        handles
            .into_iter()
            .zip(products)
            .map(|(h, p)| {
                h.join().unwrap_or_else(|_| ProductPort {
                    product: p.clone(),
                    dir: root.join(p),
                    report: Err("the port panicked".into()),
                    statuses: BTreeMap::new(),
                    seconds: 0.0,
                })
            })
            .collect()
    });
    Ok(PortResult {
        ported,
        products: results,
    })
}

/// `dir/port`, made when missing: the ports are written there only when
/// it and the capture are the user's, as `collect` checks the capture
/// (the same words).
fn own_port_folder(dir: &Path) -> Result<PathBuf, String> {
    use crate::capture::trust::{check_own_folder, make_folder};
    let not_yours =
        |(path, why)| crate::capture::layout::CollectError::NotYours { path, why }.to_string();
    check_own_folder(dir).map_err(not_yours)?;
    let root = dir.join(PORT_DIR);
    make_folder(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    check_own_folder(&root).map_err(not_yours)?;
    Ok(root)
}

/// What every product's port shares.
struct Job<'a> {
    ported: &'a Ported,
    opts: &'a PortOptions,
    binary: bool,
    users_env: &'a [(OsString, OsString)],
    children: usize,
}

impl Job<'_> {
    /// Compiles the plan for `product` into `pdir` and collects it.
    fn product(&self, product: &str, pdir: &Path) -> ProductPort {
        let started = std::time::Instant::now();
        let mut statuses = BTreeMap::new();
        let report = self.compile(product, pdir, &mut statuses).and_then(|()| {
            write_counts(pdir, self.ported)?;
            collect(pdir, &self.opts.collect).map_err(|e| e.to_string())
        });
        ProductPort {
            product: product.to_string(),
            dir: pdir.to_path_buf(),
            report,
            statuses,
            seconds: started.elapsed().as_secs_f64(),
        }
    }

    /// The children for `product`, each with its share of the modules.
    fn compile(
        &self,
        product: &str,
        pdir: &Path,
        statuses: &mut BTreeMap<String, String>,
    ) -> Result<(), String> {
        let _ = std::fs::remove_dir_all(pdir);
        std::fs::create_dir_all(pdir.join(xpu_asm_record::RECORDS_DIR))
            .map_err(|e| format!("cannot create {}: {e}", pdir.display()))?;
        let pdir = std::fs::canonicalize(pdir).unwrap_or_else(|_| pdir.to_path_buf());
        let plans = split(&self.ported.modules, self.children);
        let plan_dir = pdir.join("plans");
        std::fs::create_dir_all(&plan_dir).map_err(|e| e.to_string())?;
        let mut info = RunInfo {
            schema: 1,
            command: vec!["xpu-asm-run".into(), replay::SUBCOMMAND.into()],
            cwd: pdir.display().to_string(),
            interposer: self.opts.interposer.display().to_string(),
            emulate: Some(product.to_string()),
            isa: self.binary.then(|| "binary".to_string()),
            state: "running".into(),
            pid: None,
            host: Some(xpu_asm_record::host_name()),
            exit: None,
            error: None,
            started_unix: unix_now(),
            ended_unix: None,
            notices: Vec::new(),
            notices_refused: 0,
        };
        write_run_info(&pdir, &info).map_err(|e| e.to_string())?;
        let outs: Vec<Result<String, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = plans
                .iter()
                .enumerate()
                .map(|(i, plan)| {
                    let path = plan_dir.join(format!("plan-{i}.json"));
                    let pdir = &pdir;
                    s.spawn(move || {
                        let json = serde_json::to_vec(plan).map_err(|e| e.to_string())?;
                        std::fs::write(&path, json).map_err(|e| e.to_string())?;
                        self.child(product, pdir, &path)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())))
                .collect()
        });
        let _ = std::fs::remove_dir_all(&plan_dir);
        let mut failed = Vec::new();
        for out in outs {
            match out {
                Ok(text) => statuses.extend(
                    text.lines()
                        .filter_map(|l| l.strip_prefix(replay::STATUS_PREFIX))
                        .filter_map(|l| l.split_once(' '))
                        .map(|(k, s)| (k.to_string(), s.to_string())),
                ),
                Err(e) => failed.push(e),
            }
        }
        info.state = "ended".into();
        info.ended_unix = Some(unix_now());
        info.exit = Some(crate::capture::run::Exit::Code(i32::from(
            !failed.is_empty(),
        )));
        let _ = write_run_info(&pdir, &info);
        let _ = crate::capture::staged::finish_here(&pdir);
        match failed.first() {
            Some(e) if statuses.is_empty() => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// Runs one child on `plan` and waits: its stdout, or why it failed.
    fn child(&self, product: &str, pdir: &Path, plan: &Path) -> Result<String, String> {
        let mut cmd = std::process::Command::new(&self.opts.exe);
        cmd.arg(replay::SUBCOMMAND)
            .arg(plan)
            .current_dir(pdir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        for k in launch::inherited_owned_vars() {
            cmd.env_remove(k);
        }
        for k in [
            xpu_asm_record::ISA_ENV,
            xpu_asm_record::IGC_ENV,
            xpu_asm_record::DUMPS_ENV,
        ] {
            cmd.env_remove(k);
        }
        cmd.envs(self.users_env.iter().cloned());
        cmd.envs(launch::child_env(
            &self.opts.interposer,
            pdir,
            std::env::var_os("LD_PRELOAD").as_deref(),
            Some(product),
        ));
        if self.binary {
            cmd.env(xpu_asm_record::ISA_ENV, "binary");
        } else if xpu_asm_isa::native::iga::only_igc() == Some(1) {
            cmd.env(xpu_asm_record::IGC_ENV, "1");
        }
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.opts.exe.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            return Ok(stdout);
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let last: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = last[last.len().saturating_sub(3)..].join(" / ");
        Err(format!(
            "the compile for {product} ended with {}{}",
            out.status,
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        ))
    }
}

/// `modules` in at most `n` plans of about equal size (by kernels).
fn split(modules: &[PlanModule], n: usize) -> Vec<Plan> {
    let n = n.clamp(1, modules.len().max(1));
    let mut plans = vec![Plan::default(); n];
    let mut order: Vec<&PlanModule> = modules.iter().collect();
    order.sort_by_key(|m| std::cmp::Reverse(m.kernels.len()));
    let mut load = vec![0usize; n];
    for m in order {
        let i = (0..n).min_by_key(|i| load[*i]).unwrap_or(0);
        load[i] += m.kernels.len().max(1);
        plans[i].modules.push(m.clone());
    }
    plans.retain(|p| !p.modules.is_empty());
    plans
}

/// Writes the run's launch counts and shapes into the port's counts
/// files: each kernel its module's and name's (its launches of no kept
/// shape in its own slot, each shape in a slot pair after the kernels'),
/// the others none.
fn write_counts(pdir: &Path, ported: &Ported) -> Result<(), String> {
    use xpu_asm_record::{COUNTS_HEADER_LEN, COUNTS_SLOT_LEN};
    let records = xpu_asm_record::read::read_dir(&pdir.join(xpu_asm_record::RECORDS_DIR))
        .map_err(|e| format!("{}: {e}", pdir.display()))?;
    for rec in records {
        let max = rec.kernels.keys().max().copied().unwrap_or(0) as usize;
        let mut bytes = xpu_asm_record::counts_header().to_vec();
        bytes.resize(COUNTS_HEADER_LEN + (max + 1) * COUNTS_SLOT_LEN, 0);
        for k in rec.kernels.values() {
            let Some(m) = rec.modules.get(&k.module) else {
                continue;
            };
            let key = (plan::key_of(m), k.name.clone());
            let Some((launches, appended)) = ported.counts.get(&key) else {
                continue;
            };
            let (mut own, mut own_appended) = (*launches, *appended);
            for (shape, (l, a)) in ported.shapes.get(&key).into_iter().flatten() {
                own = own.saturating_sub(*l);
                own_appended = own_appended.saturating_sub(*a);
                bytes.extend_from_slice(&xpu_asm_record::shapes::encode_shape(k.id, *l, *a, shape));
            }
            let at = COUNTS_HEADER_LEN + k.id as usize * COUNTS_SLOT_LEN;
            bytes[at..at + COUNTS_SLOT_LEN]
                .copy_from_slice(&xpu_asm_record::encode_slot(own, own_appended));
        }
        let path = rec.events_path.with_extension("counts");
        crate::capture::files::write_atomic(&path, &bytes).map_err(|e| e.to_string())?;
    }
    Ok(())
}
