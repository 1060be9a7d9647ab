//! A kernel's origin and callers as text, for the table (a short cell),
//! `show` (its lines) and `diff` (one line each). Function names and
//! paths come from the program's objects: escaped for a terminal.

use crate::names::escape_for_terminal as esc;
use crate::report::origin::{Caller, Origin, SyclImages};
use crate::report::KernelEntry;
use crate::sources::symbols::Frame;

/// The table's cell: the kind, and an AOT binary's devices.
pub fn cell(o: Option<&Origin>) -> String {
    let Some(o) = o else {
        return "-".into();
    };
    match o.kind.as_str() {
        "aot" if !o.devices.is_empty() => format!("aot {}", o.devices.join(",")),
        "cache" => format!("cache {}", o.cache.as_ref().map_or("", |c| c.by.as_str())),
        "jit" if o.note.is_some() && !o.devices.is_empty() => "jit (fallback)".into(),
        k => k
            .strip_prefix("opencl-")
            .map_or(k.to_string(), |s| format!("cl-{s}")),
    }
}

/// One line that says how the ISA was made.
pub fn summary(o: &Origin) -> String {
    let what = match o.kind.as_str() {
        "jit" => "JIT: IGC compiled the module's SPIR-V during the run".to_string(),
        "cache" => match &o.cache {
            Some(c) if c.by == "sycl" => format!("from SYCL's cache ({})", c.dir),
            Some(c) => format!("from NEO's cache ({})", c.dir),
            None => "from a compiler cache".into(),
        },
        "aot" => format!("AOT: a native binary for {}", devices(&o.devices)),
        "generated" => format!(
            "generated during the run: a native binary for {} made in memory, not by IGC",
            devices(&o.devices)
        ),
        "opencl-source" => "OpenCL C source, compiled during the run".into(),
        "opencl-il" => "SPIR-V through OpenCL, compiled during the run".into(),
        "opencl-binary" => format!("an OpenCL program binary for {}", devices(&o.devices)),
        k => k.to_string(),
    };
    esc(&what)
}

/// What an object registered with the SYCL runtime, in a line.
fn sycl_images(s: &SyclImages) -> String {
    let mut carries = Vec::new();
    if !s.native.is_empty() {
        carries.push(format!(
            "native code for {} ({} image{})",
            s.native.join(", "),
            s.native_images,
            if s.native_images == 1 { "" } else { "s" }
        ));
    }
    if s.spirv {
        carries.push("SPIR-V".to_string());
    }
    let from = s
        .image
        .as_ref()
        .map(|t| format!("; the module is its {t} image"))
        .unwrap_or_default();
    format!(
        "{} registered {}{from}",
        s.library.path,
        match carries.is_empty() {
            true => "neither SPIR-V nor native code for a GPU".to_string(),
            false => carries.join(" and "),
        }
    )
}

fn devices(d: &[String]) -> String {
    match d.is_empty() {
        true => "an unnamed device".into(),
        false => d.join(", "),
    }
}

/// `show`'s lines of a kernel's origin and callers.
pub fn lines(k: &KernelEntry) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(o) = &k.origin {
        out.push(format!("  origin:       {}", summary(o)));
        if let Some(note) = &o.note {
            out.push(format!("                {}", esc(note)));
        }
        if let Some(fix) = &o.fix {
            out.push(format!("  fix:          {}", esc(fix)));
        }
        if let Some(s) = &o.sycl_images {
            out.push(format!("  SYCL images:  {}", esc(&sycl_images(s))));
        }
        if let Some(l) = &o.library {
            out.push(format!("  carried by:   {}", esc(&l.path)));
        }
        if let Some(l) = &o.created_by {
            let f = l
                .function
                .as_deref()
                .map(|f| format!("{}, ", esc(f)))
                .unwrap_or_default();
            out.push(format!("  created by:   {f}{}", esc(&l.path)));
        }
    }
    for (i, c) in k.callers.iter().enumerate() {
        caller_lines(&mut out, i, c);
    }
    out
}

fn caller_lines(out: &mut Vec<String>, i: usize, c: &Caller) {
    let head = match i {
        0 => "  launched by: ",
        _ => "  also by:     ",
    };
    let Some(first) = c.frames.first() else {
        out.push(format!(
            "{head} (no frame outside xpu-asm and the runtimes, {} folded: a thread of \
             the runtimes launched it, as SYCL's scheduler does once a command's \
             dependencies are met)",
            c.folded
        ));
        return;
    };
    let procs = match c.processes {
        1 => String::new(),
        n => format!(" ({n} processes)"),
    };
    out.push(format!("{head} {}{procs}", frame(first)));
    if let Some(op) = c.op.filter(|&op| op > 0).and_then(|op| c.frames.get(op)) {
        out.push(format!("  op:           {}", frame(op)));
    }
    for f in c.frames.iter().skip(1) {
        out.push(format!("                {}", frame(f)));
    }
    if c.folded > 0 {
        out.push(format!(
            "                ({} frames of xpu-asm and the runtimes below, folded)",
            c.folded
        ));
    }
}

/// `function (file:line) [object]`.
pub fn frame(f: &Frame) -> String {
    let name = f
        .function
        .as_deref()
        .map(esc)
        .unwrap_or_else(|| format!("0x{:x}", f.offset));
    let at = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!(" ({}:{line})", esc(file)),
        (Some(file), None) => format!(" ({})", esc(file)),
        _ => String::new(),
    };
    let object = f.object.rsplit('/').next().unwrap_or(&f.object);
    format!("{name}{at} [{}]", esc(object))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_name_the_kind_and_an_aot_binarys_devices() {
        let o = |kind: &str, devices: &[&str]| Origin {
            kind: kind.into(),
            devices: devices.iter().map(|d| d.to_string()).collect(),
            ..Origin::default()
        };
        assert_eq!(cell(Some(&o("aot", &["pvc", "dg2"]))), "aot pvc,dg2");
        assert_eq!(cell(Some(&o("opencl-il", &[]))), "cl-il");
        assert_eq!(cell(Some(&o("jit", &[]))), "jit");
        assert_eq!(cell(None), "-");
        let f = Frame {
            function: Some("f\u{1b}[31m".into()),
            file: Some("a.c".into()),
            line: Some(3),
            object: "/x/libq.so".into(),
            offset: 16,
        };
        assert!(!frame(&f).contains('\u{1b}'), "{}", frame(&f));
        assert!(frame(&f).ends_with("(a.c:3) [libq.so]"), "{}", frame(&f));
    }
}
