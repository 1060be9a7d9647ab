//! `--emulate DEV`: NEO's no-hardware mode, the variables that set it, and
//! the devices this system's NEO knows (from `ocloc`'s list, kept once per
//! `ocloc`).

use crate::capture::layout::CollectError;
use crate::run::interposer;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// NEO's no-hardware mode (see docs/real-stack.md); `ProductFamilyOverride`
/// gets the device. One set serves NEO 22.43 and NEO 26, Level Zero and
/// OpenCL: each ignores the keys it does not know.
pub const EMULATE_ENV: [(&str, &str); 7] = [
    ("NEOReadDebugKeys", "1"),
    ("SetCommandStreamReceiver", "1"),
    ("ProductFamilyOverride", ""),
    // Without it zeKernelCreate (NEO 22.43) or zeInit (NEO 26) fails.
    ("HardwareInfoOverride", "1x4x8"),
    // OpenCL waits for timestamps nothing writes: without it clFinish,
    // blocking reads and event waits never return.
    ("EnableTimestampWaitForQueues", "0"),
    // NEO 26 built without aubstream (Debian's): without it zeInit segfaults.
    ("UseAubStream", "0"),
    // NEO 26 on dg2, mtl, bmg, lnl, ptl: without it NEO aborts at device creation.
    ("UseExternalAllocatorForSshAndDsh", "0"),
];

/// What NEO 22.43 (the NEO of IGC 1) needs besides [`EMULATE_ENV`]: it
/// writes an AUB stream of everything it submits (1.3 MB a launch, into
/// the working folder) unless its sub-capture mode is on with a filter
/// past any kernel, which writes nothing and holds no file. (That mode
/// makes each enqueue blocking: an OpenCL enqueue behind a user event not
/// yet signaled never returns there. The stream to `/dev/null` instead
/// would cost 0.3 ms a launch and keep a descriptor of NEO's open, which a
/// workload that closes its descriptors gets back for a file of its own,
/// NEO's stream then written into it.) NEO 26 writes no stream at all
/// (`UseAubStream=0`), and gets none of these.
pub const EMULATE_NEO22_ENV: [(&str, &str); 3] = [
    ("AUBDumpSubCaptureMode", "1"),
    ("AUBDumpFilterKernelStartIdx", "999999999"),
    ("AUBDumpFilterKernelEndIdx", "999999999"),
];

/// What one product needs besides [`EMULATE_ENV`]: a device id, which
/// reads 0 without a forced one for lnl on NEO 26 and for dg2 on NEO 22.43
/// (0x4f80 is the one NEO 26 gives dg2 by itself).
pub const EMULATE_PRODUCT_ENV: [(&str, &str, &str); 2] = [
    ("dg2", "ForceDeviceId", "4f80"),
    ("lnl", "ForceDeviceId", "64a0"),
];

/// The devices this system's NEO can emulate, as the `ocloc` in PATH (built
/// from the same NEO) lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeoDevices {
    pub devices: Vec<String>,
}

impl NeoDevices {
    /// `dev` itself or one of its variants (`lnl` for `lnl-m`, `dg2` for
    /// `dg2-g10`) is in the list.
    pub fn has(&self, dev: &str) -> bool {
        self.devices
            .iter()
            .any(|d| d == dev || d.strip_prefix(dev).is_some_and(|r| r.starts_with('-')))
    }

    /// The list without variants: each name up to its first `-`, once.
    pub fn products(&self) -> Vec<&str> {
        let mut seen = Vec::new();
        for d in &self.devices {
            let p = d.split('-').next().unwrap_or(d);
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        seen
    }
}

/// The `-device` list of `ocloc compile --help`: the names after
/// "<device_type> can be:" up to its closing "ip version"/"version" note.
pub fn ocloc_devices(help: &str) -> Vec<String> {
    let Some(at) = help.find("can be:") else {
        return Vec::new();
    };
    let line = help[at + "can be:".len()..].lines().next().unwrap_or("");
    line.split(',')
        .map(str::trim)
        .take_while(|d| !d.contains(' ') && !d.is_empty())
        .map(str::to_string)
        .collect()
}

/// Asks the `ocloc` in PATH for its devices; `None` when there is no ocloc
/// to ask (then NEO itself refuses an unknown device). The list is kept in
/// the user's cache folder under a name made of that ocloc's path, size and
/// time of change, so that later runs with the same ocloc do not start it
/// again (it takes a few milliseconds before every emulated run).
pub fn neo_devices() -> Option<NeoDevices> {
    let kept = ocloc_list_file();
    if let Some(devices) = kept.as_deref().and_then(read_device_list) {
        return Some(NeoDevices { devices });
    }
    let help = std::process::Command::new("ocloc")
        .args(["compile", "--help"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let devices = ocloc_devices(&String::from_utf8_lossy(&help.stdout));
    if devices.is_empty() {
        return None;
    }
    if let Some(f) = &kept {
        // A list not kept is asked for again next time: nothing is lost.
        let _ = write_device_list(f, &devices);
    }
    Some(NeoDevices { devices })
}

/// Where the device list of the `ocloc` in PATH is kept: a file of the
/// user's cache folder named for that ocloc's path, size and time of change
/// (a new NEO's ocloc gets a file of its own); `None` without an ocloc in
/// PATH or a cache folder.
fn ocloc_list_file() -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let path = std::env::var_os("PATH")?;
    let ocloc = std::env::split_paths(&path)
        .map(|d| d.join("ocloc"))
        .find(|f| f.is_file())?;
    let ocloc = std::fs::canonicalize(ocloc).ok()?;
    let m = std::fs::metadata(&ocloc).ok()?;
    // Stable within one build of xpu-asm-run, which is all a name needs.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (
        ocloc.as_os_str().as_bytes(),
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ino(),
    )
        .hash(&mut h);
    let cache = interposer::cache_home(
        std::env::var_os("XDG_CACHE_HOME"),
        interposer::home().as_deref(),
    )?;
    Some(
        cache
            .join("xpu-asm")
            .join(format!("ocloc-devices-{:016x}", h.finish())),
    )
}

/// A kept device list: one device per line, ending with `end` (a list cut
/// short is not one).
fn read_device_list(f: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(f).ok()?;
    let (list, rest) = text.rsplit_once("end\n")?;
    let devices: Vec<String> = list.lines().map(str::to_string).collect();
    (rest.is_empty()
        && !devices.is_empty()
        && devices.iter().all(|d| !d.is_empty() && !d.contains(' ')))
    .then_some(devices)
}

fn write_device_list(f: &Path, devices: &[String]) -> Result<(), CollectError> {
    if let Some(dir) = f.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let mut text = devices.join("\n");
    text.push_str("\nend\n");
    crate::capture::files::write_atomic(f, text.as_bytes())
}

/// The version of the NEO the `ocloc` in PATH belongs to, for the error
/// that refuses a device (asked only then: it is a second run of ocloc).
pub fn neo_version() -> String {
    // `ocloc query` writes its answer to a file in its working folder.
    let dir = std::env::temp_dir().join(format!("xpu-asm-ocloc-{}", std::process::id()));
    let version = std::fs::create_dir(&dir)
        .ok()
        .and_then(|()| {
            let ok = std::process::Command::new("ocloc")
                .args(["query", "OCL_DRIVER_VERSION"])
                .current_dir(&dir)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .ok()?
                .success();
            let v = std::fs::read_to_string(dir.join("OCL_DRIVER_VERSION")).ok()?;
            ok.then(|| {
                v.trim_matches(|c: char| c == '\0' || c.is_whitespace())
                    .to_string()
            })
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "(version unknown)".to_string());
    let _ = std::fs::remove_dir_all(&dir);
    version
}

/// NEO's no-hardware variables for device `dev` (`--emulate dev`) on this
/// system's NEO.
pub fn emulate_env(dev: &str) -> Vec<(OsString, OsString)> {
    emulate_env_for(dev, xpu_asm_isa::native::iga::only_igc() == Some(1))
}

/// [`emulate_env`] for NEO 22.43 (`neo22`) or a later NEO.
pub fn emulate_env_for(dev: &str, neo22: bool) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if neo22 {
        env.extend(EMULATE_NEO22_ENV.map(|(k, v)| (k.into(), v.into())));
    }
    for (k, v) in EMULATE_ENV {
        let v = if k == "ProductFamilyOverride" { dev } else { v };
        env.push((k.into(), v.into()));
    }
    for (_, k, v) in EMULATE_PRODUCT_ENV.iter().filter(|(p, _, _)| *p == dev) {
        env.push((k.into(), v.into()));
    }
    env
}

/// The products `--emulate` suggests, newest families last, of those
/// this system's NEO has (all of them when no `ocloc` says).
const SUGGESTED: [&str; 6] = ["pvc", "dg2", "mtl", "bmg", "lnl", "ptl"];

/// The products the shell completions offer for `--emulate`, `--port-to`
/// and `port --to`: those NEO 26 emulates, then the older ones Debian 12's
/// NEO 22.43 has (a stack's own list is `ocloc compile --help`'s).
pub const COMPLETED_PRODUCTS: [&str; 9] = [
    "pvc", "dg2", "mtl", "bmg", "lnl", "ptl", "tgllp", "dg1", "acm",
];

/// Whether this host has an Intel GPU: a DRM render node of PCI vendor
/// 0x8086 (`/sys/class/drm/renderD*/device/vendor`), which both NEOs
/// open. `sysfs` is `/sys` but in tests.
pub fn has_intel_gpu(sysfs: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(sysfs.join("class/drm")) else {
        return false;
    };
    rd.filter_map(|e| e.ok())
        .filter(|e| e.file_name().as_bytes().starts_with(b"renderD"))
        .any(|e| {
            std::fs::read_to_string(e.path().join("device/vendor"))
                .is_ok_and(|v| v.trim().eq_ignore_ascii_case("0x8086"))
        })
}

/// What to say when a run launched nothing and built no module, and this
/// host has no Intel GPU (`has_gpu`): that no device was found, and that
/// `--emulate` compiles the kernels without one, with the products this
/// system's NEO (`neo`) has. `None` where there is a GPU: the program
/// itself chose to launch nothing there.
pub fn no_device_hint(has_gpu: bool, neo: Option<&NeoDevices>) -> Option<String> {
    if has_gpu {
        return None;
    }
    let products: Vec<&str> = SUGGESTED
        .into_iter()
        .filter(|p| neo.map_or(true, |n| n.has(p)))
        .collect();
    let first = products.first().copied().unwrap_or("pvc");
    Some(format!(
        "no Level Zero or OpenCL device was found: this host has no Intel GPU (no Intel render \
         node under /dev/dri). `xpu-asm-run --emulate {first} -- COMMAND` compiles the \
         program's kernels for that GPU without one, through the real driver and IGC, and \
         reports their ISA (the kernels do not execute); this system's NEO emulates {}",
        products.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::launch::check_emulated_device;

    /// The hint is given only where the host has no Intel GPU, with the
    /// products this NEO emulates.
    #[test]
    fn without_an_intel_gpu_the_hint_names_emulate() {
        let d = std::env::temp_dir().join(format!("xpu-asm-sysfs-{}", std::process::id()));
        let node = |name: &str, vendor: &str| {
            let dev = d.join("class/drm").join(name).join("device");
            std::fs::create_dir_all(&dev).unwrap();
            std::fs::write(dev.join("vendor"), vendor).unwrap();
        };
        assert!(!has_intel_gpu(&d), "no drm folder");
        node("card0", "0x8086\n");
        node("renderD128", "0x1002\n");
        assert!(
            !has_intel_gpu(&d),
            "a card node, and another vendor's render node"
        );
        node("renderD129", "0x8086\n");
        assert!(has_intel_gpu(&d));
        std::fs::remove_dir_all(&d).unwrap();
        assert_eq!(no_device_hint(true, None), None);
        let old = NeoDevices {
            devices: ["tgllp", "dg2", "pvc"].map(String::from).into(),
        };
        let hint = no_device_hint(false, Some(&old)).unwrap();
        assert!(
            hint.starts_with("no Level Zero or OpenCL device was found"),
            "{hint}"
        );
        assert!(
            hint.contains("`xpu-asm-run --emulate pvc -- COMMAND`"),
            "{hint}"
        );
        assert!(
            hint.ends_with("this system's NEO emulates pvc, dg2"),
            "{hint}"
        );
    }

    #[test]
    fn a_kept_device_list_is_read_back_whole_or_not_at_all() {
        let d = std::env::temp_dir().join(format!("xpu-asm-devlist-{}", std::process::id()));
        let f = d.join("xpu-asm").join("ocloc-devices-0");
        let devices: Vec<String> = ["dg2", "pvc", "xe-hpc"].map(String::from).into();
        write_device_list(&f, &devices).unwrap();
        assert_eq!(read_device_list(&f), Some(devices));
        // Cut short (no closing `end`), empty, or not a list: asked again.
        for bad in [
            "dg2\npvc\n",
            "end\n",
            "",
            "dg2\nend\npvc\n",
            "dg2 pvc\nend\n",
        ] {
            std::fs::write(&f, bad).unwrap();
            assert_eq!(read_device_list(&f), None, "{bad:?}");
        }
        assert_eq!(read_device_list(&d.join("none")), None);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn emulated_devices_come_from_oclocs_list() {
        // NEO 22.43's and NEO 26.27's `ocloc compile --help`, abridged.
        let old = "  -device <device_type>  Target device.\n                                <device_type> can be: tgllp, dg1, acm-g10, dg2-g10, dg2, pvc-sdv, pvc, gen12lp, xe-hpc, version  or hexadecimal value with 0x prefix\n  -q  quiet\n  <device_type> can be: xe_hp_sdv, dg2\n";
        let new = "<device_type> can be: dg2, mtl, bmg-g21, bmg, lnl-a0, lnl-m, ptl-h, ptl, xe2, ip version  or hexadecimal value with 0x prefix\n";
        let old = NeoDevices {
            devices: ocloc_devices(old),
        };
        assert_eq!(
            old.devices,
            ["tgllp", "dg1", "acm-g10", "dg2-g10", "dg2", "pvc-sdv", "pvc", "gen12lp", "xe-hpc"]
        );
        let new = NeoDevices {
            devices: ocloc_devices(new),
        };
        for dev in ["pvc", "dg2"] {
            assert!(old.has(dev), "{dev}");
        }
        for dev in ["mtl", "bmg", "lnl", "ptl", "pv", "xyz"] {
            assert!(!old.has(dev), "{dev}");
        }
        for dev in ["dg2", "mtl", "bmg", "lnl", "ptl"] {
            assert!(new.has(dev), "{dev}");
        }
        assert!(!new.has("pt"));
        let e = check_emulated_device("--emulate", "bmg", Some(&old), || "22.43.24595".into())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--emulate bmg: this system's NEO 22.43.24595 cannot emulate bmg; its ocloc has: tgllp, dg1, acm, dg2, pvc, gen12lp, xe. Choose"),
            "{e}"
        );
        // Named by the option that asked.
        let e = check_emulated_device("--port-to", "zz", Some(&old), || "22.43.24595".into())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--port-to zz: this system's NEO"), "{e}");
        // NEO's version is asked only for the error.
        let unasked = || -> String { panic!("NEO's version asked for a device it has") };
        assert!(check_emulated_device("--emulate", "bmg", Some(&new), unasked).is_ok());
        // No ocloc to ask: NEO itself decides.
        assert!(check_emulated_device("--emulate", "bmg", None, unasked).is_ok());
    }
}
