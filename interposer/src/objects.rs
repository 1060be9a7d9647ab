//! The loaded objects (the program and its shared libraries) and call
//! stacks, for the origins of modules and the callers of kernels: the
//! record names each object once (`object` event: its path, build id and
//! where it is loaded) and each stack as raw return addresses; the
//! collector symbolizes them. Nothing here runs on a launch past a
//! kernel's first.

use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use xpu_asm_record::{hex, push_json_bytes_field};

/// The most frames a stack keeps (the innermost, past the interposer's own).
pub const MAX_FRAMES: usize = 48;

/// A call stack: return addresses, innermost first.
pub struct Stack {
    frames: [usize; MAX_FRAMES],
    len: usize,
}

impl Stack {
    pub fn frames(&self) -> &[usize] {
        &self.frames[..self.len]
    }

    /// `,"stack":[a,b,...]`.
    pub fn push_json(&self, line: &mut Vec<u8>, key: &str) {
        line.extend_from_slice(format!(",\"{key}\":[").as_bytes());
        for (i, f) in self.frames().iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(f.to_string().as_bytes());
        }
        line.push(b']');
    }
}

/// The interposer's own code, whose frames a stack leaves out (set by the
/// first listing of the objects).
static OWN: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

type Reason = c_int;
const URC_NO_REASON: Reason = 0;
const URC_END_OF_STACK: Reason = 5;

extern "C" {
    // libgcc's unwinder, which Rust's standard library links (libgcc_s):
    // it reads each frame's .eh_frame, finds objects without a lock where
    // glibc has `_dl_find_object` (2.35 on) and stops at a frame it has no
    // unwind information for.
    fn _Unwind_Backtrace(
        trace: extern "C" fn(*mut c_void, *mut c_void) -> Reason,
        arg: *mut c_void,
    ) -> Reason;
    fn _Unwind_GetIP(ctx: *mut c_void) -> usize;
}

extern "C" fn one_frame(ctx: *mut c_void, arg: *mut c_void) -> Reason {
    // SAFETY: `arg` is the `Stack` `unwind` passed, alive for the call.
    let stack = unsafe { &mut *(arg as *mut Stack) };
    // SAFETY: a context the unwinder handed to its callback.
    let ip = unsafe { _Unwind_GetIP(ctx) };
    if ip == 0 {
        return URC_END_OF_STACK;
    }
    let (start, end) = (OWN[0].load(Relaxed), OWN[1].load(Relaxed));
    if stack.len == 0 && (start..end).contains(&ip) {
        return URC_NO_REASON;
    }
    stack.frames[stack.len] = ip;
    stack.len += 1;
    if stack.len == MAX_FRAMES {
        URC_END_OF_STACK
    } else {
        URC_NO_REASON
    }
}

/// The calling thread's stack, the interposer's own frames left out.
#[inline(never)]
pub fn unwind() -> Stack {
    if OWN[1].load(Relaxed) == 0 {
        set_own(&list_objects());
    }
    let mut stack = Stack {
        frames: [0; MAX_FRAMES],
        len: 0,
    };
    // SAFETY: the callback writes only into `stack`, within its bounds.
    unsafe { _Unwind_Backtrace(one_frame, &mut stack as *mut Stack as *mut c_void) };
    stack
}

/// One loaded object the record named.
struct Loaded {
    id: u32,
    base: usize,
    start: usize,
    end: usize,
    name: Vec<u8>,
}

/// The objects named so far, and the loader's counts of objects added and
/// removed when they were listed (the same counts: nothing to list again).
#[derive(Default)]
pub struct Objects {
    known: Vec<Loaded>,
    next: u32,
    listed: Option<(u64, u64)>,
}

/// What one object looks like to `dl_iterate_phdr`.
struct Seen {
    name: Vec<u8>,
    base: usize,
    start: usize,
    end: usize,
    build_id: Vec<u8>,
}

impl Objects {
    /// The record's id of the object whose loaded image holds `addr`.
    pub fn find(&self, addr: usize) -> Option<u32> {
        self.known
            .iter()
            .find(|o| (o.start..o.end).contains(&addr))
            .map(|o| o.id)
    }

    /// Where object `id` is loaded (the offset of its addresses).
    pub fn base(&self, id: u32) -> Option<usize> {
        self.known.iter().find(|o| o.id == id).map(|o| o.base)
    }

    /// Lists the loaded objects again when the loader added or removed
    /// some since the last listing: the `object` event of each new one.
    pub fn refresh(&mut self) -> Vec<Vec<u8>> {
        let counts = loader_counts();
        if counts.is_some() && counts == self.listed {
            return Vec::new();
        }
        self.listed = counts;
        let seen = list_objects();
        set_own(&seen);
        self.known
            .retain(|k| seen.iter().any(|s| s.base == k.base && s.name == k.name));
        let mut lines = Vec::new();
        for s in seen {
            let known = self
                .known
                .iter()
                .any(|k| k.base == s.base && k.name == s.name);
            if known || s.start >= s.end {
                continue;
            }
            self.next += 1;
            lines.push(object_line(self.next, &s));
            self.known.push(Loaded {
                id: self.next,
                base: s.base,
                start: s.start,
                end: s.end,
                name: s.name,
            });
        }
        lines
    }
}

/// Sets the interposer's own range from the objects `seen`.
fn set_own(seen: &[Seen]) {
    let here = set_own as *const () as usize;
    if let Some(s) = seen.iter().find(|s| (s.start..s.end).contains(&here)) {
        OWN[0].store(s.start, Relaxed);
        OWN[1].store(s.end, Relaxed);
    }
}

/// `{"type":"object","id":N,"path":..,"base":B,"start":S,"end":E,"build_id":".."}`
/// (the program's own path is empty: the process header has it).
fn object_line(id: u32, s: &Seen) -> Vec<u8> {
    let mut line = format!("{{\"type\":\"object\",\"id\":{id},").into_bytes();
    push_json_bytes_field(&mut line, "path", &s.name);
    line.extend_from_slice(
        format!(
            ",\"base\":{},\"start\":{},\"end\":{},\"build_id\":\"{}\"}}\n",
            s.base,
            s.start,
            s.end,
            hex(&s.build_id)
        )
        .as_bytes(),
    );
    line
}

extern "C" fn first_counts(info: *mut libc::dl_phdr_info, _: usize, arg: *mut c_void) -> c_int {
    // SAFETY: the loader's info for this call; `arg` the `Option` of `loader_counts`.
    let (info, out) = unsafe { (&*info, &mut *(arg as *mut Option<(u64, u64)>)) };
    *out = Some((info.dlpi_adds, info.dlpi_subs));
    1
}

/// The loader's counts of objects added and removed so far.
fn loader_counts() -> Option<(u64, u64)> {
    let mut out: Option<(u64, u64)> = None;
    // SAFETY: the callback writes only `out`, and stops at the first object.
    unsafe { libc::dl_iterate_phdr(Some(first_counts), &mut out as *mut _ as *mut c_void) };
    out
}

extern "C" fn one_object(info: *mut libc::dl_phdr_info, _: usize, arg: *mut c_void) -> c_int {
    // SAFETY: the loader's info for this call; `arg` the Vec of `list_objects`.
    let (info, out) = unsafe { (&*info, &mut *(arg as *mut Vec<Seen>)) };
    let name = match info.dlpi_name.is_null() {
        true => Vec::new(),
        // SAFETY: the loader's NUL-terminated name of the object.
        false => unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_bytes()
            .to_vec(),
    };
    let base = info.dlpi_addr as usize;
    let (mut start, mut end, mut build_id) = (usize::MAX, 0, Vec::new());
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        let at = base.wrapping_add(ph.p_vaddr as usize);
        match ph.p_type {
            libc::PT_LOAD => {
                start = start.min(at);
                end = end.max(at.wrapping_add(ph.p_memsz as usize));
            }
            // SAFETY: a loaded note segment, `p_memsz` bytes at `at`.
            libc::PT_NOTE if build_id.is_empty() => unsafe {
                build_id = gnu_build_id(at, ph.p_memsz as usize)
            },
            _ => {}
        }
    }
    out.push(Seen {
        name,
        base,
        start,
        end,
        build_id,
    });
    0
}

/// Every object loaded now.
fn list_objects() -> Vec<Seen> {
    let mut out: Vec<Seen> = Vec::new();
    // SAFETY: the callback only reads the loader's info and pushes to `out`.
    unsafe { libc::dl_iterate_phdr(Some(one_object), &mut out as *mut _ as *mut c_void) };
    out
}

/// The GNU build id among the notes of `len` bytes at `at` (empty: none).
///
/// # Safety
/// `len` bytes at `at` are mapped (a loaded `PT_NOTE` segment).
unsafe fn gnu_build_id(at: usize, len: usize) -> Vec<u8> {
    // SAFETY: per this function's contract.
    let notes = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
    let word = |o: usize| {
        notes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let mut o = 0;
    while let (Some(namesz), Some(descsz), Some(kind)) = (word(o), word(o + 4), word(o + 8)) {
        let name = o + 12;
        let desc = name + namesz.div_ceil(4) * 4;
        let next = desc + descsz.div_ceil(4) * 4;
        if next > notes.len() {
            break;
        }
        // NT_GNU_BUILD_ID, owner "GNU".
        if kind == 3 && notes.get(name..name + namesz) == Some(&b"GNU\0"[..]) {
            return notes[desc..desc + descsz].to_vec();
        }
        o = next;
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_binary_is_listed_with_its_build_id_and_a_stack_reaches_it() {
        let mut objects = Objects::default();
        let lines = objects.refresh();
        assert!(!lines.is_empty());
        let here = the_test_binary_is_listed_with_its_build_id_and_a_stack_reaches_it as *const ()
            as usize;
        assert!(objects.find(here).is_some(), "{lines:?}");
        assert!(objects.refresh().is_empty(), "nothing loaded since");
        let libc_line = lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .find(|l| l.contains("libc.so"))
            .expect("libc listed");
        assert!(!libc_line.contains("\"build_id\":\"\""), "{libc_line}");
        // The test binary's own frames are left out as the interposer's.
        let stack = unwind();
        assert!(!stack.frames().is_empty());
        assert!(stack.frames().iter().all(|&f| f != 0));
    }
}
