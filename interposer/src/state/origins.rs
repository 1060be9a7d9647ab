//! Where modules come from and who launches kernels: the loaded objects,
//! each named once in the record; the stack that created a module and
//! the object whose image holds its bytes; the stacks of each kernel's
//! first launches. Only rare paths come here: a module's creation, and a
//! launch that takes the registry lock anyway (a kernel's new shape).

use crate::objects::{unwind, Objects, Stack};
use crate::output::Output;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use xpu_asm_record::{hex, push_json_bytes_field};

/// Distinct stacks recorded per kernel: its first launch's, and those of
/// the first launches of later shapes from other call sites.
pub const MAX_CALLERS: usize = 8;
/// The new shapes of a kernel at which its stack is taken; past them a new
/// shape costs no unwind.
pub const MAX_UNWINDS: usize = 16;

/// What the registry keeps for origins and callers.
#[derive(Default)]
pub struct Origins {
    /// The loaded objects named in the record.
    objects: Objects,
    /// Kernel id -> the stacks of its launches recorded (their hashes).
    callers: HashMap<u32, Vec<u64>>,
    /// The objects whose SPIR-V images the record named.
    spirv_objects: std::collections::HashSet<Option<u32>>,
}

/// The stack of a launch of `kernel`'s new shape, while the kernel has
/// had few enough (taken before the registry lock).
pub fn launch_stack(kernel: &crate::shapes::KernelShapes) -> Option<Stack> {
    (kernel.made() < MAX_UNWINDS).then(unwind)
}

impl Origins {
    /// Names in the record every loaded object `addrs` fall in that it
    /// has not named yet (the objects are listed again only when one is
    /// missing and the loader added or removed objects since).
    fn name_objects(&mut self, out: &mut Output, addrs: &[usize]) {
        if addrs.iter().all(|&a| self.objects.find(a).is_some()) {
            return;
        }
        for line in self.objects.refresh() {
            out.event(&line, true);
        }
    }

    /// `{"type":"stack","kernel":K,"frames":[..]}`: a launch's stack, when
    /// the kernel has not recorded it yet and has fewer than [`MAX_CALLERS`].
    pub fn launch_stack_taken(&mut self, out: &mut Output, kernel: u32, stack: &Stack) {
        let mut h = DefaultHasher::new();
        stack.frames().hash(&mut h);
        let key = h.finish();
        let seen = self.callers.entry(kernel).or_default();
        if seen.len() >= MAX_CALLERS || seen.contains(&key) {
            return;
        }
        seen.push(key);
        self.name_objects(out, stack.frames());
        let mut line = format!("{{\"type\":\"stack\",\"kernel\":{kernel}").into_bytes();
        stack.push_json(&mut line, "frames");
        line.extend_from_slice(b"}\n");
        out.event(&line, false);
    }

    /// A module's creation: `,"stack":[..]` and, for the bytes the program
    /// passed, `,"input_object":N` (the object whose loaded image holds
    /// them, and `,"input_offset":O`, where from its base) or `null`
    /// (memory of the process: made or read at run time).
    pub fn push_creation(
        &mut self,
        out: &mut Output,
        line: &mut Vec<u8>,
        stack: &Stack,
        input: Option<usize>,
    ) {
        let mut addrs = stack.frames().to_vec();
        addrs.extend(input);
        self.name_objects(out, &addrs);
        stack.push_json(line, "stack");
        if let Some(at) = input {
            let id = self.objects.find(at);
            push_object(line, "input_object", id);
            // Where in the object: the collector finds the SYCL device
            // image the bytes are.
            if let Some(base) = id.and_then(|id| self.objects.base(id)) {
                line.extend_from_slice(format!(",\"input_offset\":{}", at - base).as_bytes());
            }
        }
    }
}

/// The first bytes of an image kept (its magic number: SPIR-V, ELF, an
/// archive, a compressed image).
pub const MAGIC_BYTES: usize = 8;

/// One device image as registered.
pub struct Image<'a> {
    pub target: &'a [u8],
    pub format: u8,
    pub compile_options: &'a [u8],
    pub link_options: &'a [u8],
    pub start: usize,
    pub size: usize,
    pub magic: &'a [u8],
}

impl Image<'_> {
    /// SPIR-V (or LLVM IR), plain or compressed: code for any device.
    fn portable(&self) -> bool {
        self.format == 2
            || self.format == 3
            || self.magic.starts_with(&[0x03, 0x02, 0x23, 0x07])
            || matches!(self.target, b"spir64" | b"spir")
    }
}

impl Origins {
    /// `{"type":"sycl_images","object":N,"spirv":K,"images":[..]}`: the
    /// device images a DPC++-built object registered with the SYCL runtime
    /// (`object`: the one holding the registration): `spirv` how many are
    /// SPIR-V (or LLVM IR), `images` each other one (native code, or for a
    /// device-specific target) with its target, format, options, size,
    /// first bytes (hex) and the object and offset of its bytes. A
    /// registration of only SPIR-V images by an object that registered
    /// SPIR-V before writes nothing: oneMKL's libraries register thousands.
    pub fn push_sycl_images(&mut self, out: &mut Output, desc: usize, images: &[Image]) {
        let spirv = images.iter().filter(|i| i.portable()).count();
        let others: Vec<&Image> = images.iter().filter(|i| !i.portable()).collect();
        let mut addrs: Vec<usize> = others.iter().map(|i| i.start).collect();
        addrs.push(desc);
        self.name_objects(out, &addrs);
        let object = self.objects.find(desc);
        let first_spirv = spirv > 0 && self.spirv_objects.insert(object);
        if others.is_empty() && !first_spirv {
            return;
        }
        let mut line = b"{\"type\":\"sycl_images\"".to_vec();
        push_object(&mut line, "object", object);
        line.extend_from_slice(format!(",\"spirv\":{spirv},\"images\":[").as_bytes());
        for (n, i) in others.iter().enumerate() {
            if n > 0 {
                line.push(b',');
            }
            self.push_image(&mut line, i);
        }
        line.extend_from_slice(b"]}\n");
        out.event(&line, true);
    }

    fn push_image(&self, line: &mut Vec<u8>, i: &Image) {
        line.push(b'{');
        push_json_bytes_field(line, "target", i.target);
        line.extend_from_slice(format!(",\"format\":{},", i.format).as_bytes());
        push_json_bytes_field(line, "compile_options", i.compile_options);
        line.push(b',');
        push_json_bytes_field(line, "link_options", i.link_options);
        let at = self.objects.find(i.start);
        push_object(line, "object", at);
        if let Some(base) = at.and_then(|id| self.objects.base(id)) {
            line.extend_from_slice(format!(",\"offset\":{}", i.start - base).as_bytes());
        }
        line.extend_from_slice(
            format!(",\"size\":{},\"magic\":\"{}\"}}", i.size, hex(i.magic)).as_bytes(),
        );
    }
}

/// `,"KEY":N`, or `null` for no object.
fn push_object(line: &mut Vec<u8>, key: &str, id: Option<u32>) {
    match id {
        Some(id) => line.extend_from_slice(format!(",\"{key}\":{id}").as_bytes()),
        None => line.extend_from_slice(format!(",\"{key}\":null").as_bytes()),
    }
}
