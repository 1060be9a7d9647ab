//! A kernel's origin and callers in the report (schema 5): the types
//! alone, made by [`super::origins`].

use crate::sources::symbols::Frame;
use serde::{Deserialize, Serialize};

/// How a kernel's ISA was made (schema 5).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    pub kind: String,
    /// `cache`: whose cache, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Cache>,
    /// A native binary's devices (`aot`, `generated`, `opencl-binary`,
    /// and a binary the driver compiled again instead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// The device it ran on, as ocloc names it (null: not known).
    pub device: Option<String>,
    /// The object whose loaded image held the bytes the program passed.
    pub library: Option<Library>,
    /// The first object outside xpu-asm and the runtimes on the stack that
    /// created the module (its function where known).
    pub created_by: Option<Library>,
    /// What else to know (a native binary the driver would not run, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The SYCL device images the object that carried or created the
    /// module registered (`__sycl_register_lib`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sycl_images: Option<SyclImages>,
    /// The ahead-of-time code did not cover the device: the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// What one object registered with the SYCL runtime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyclImages {
    pub library: Library,
    /// How many native images (or images for a device-specific target)
    /// it registered.
    pub native_images: usize,
    /// The target of the image the module's bytes were (`spir64`,
    /// `spir64_gen`; null: the bytes lay in none).
    pub image: Option<String>,
    /// The devices its native images carry code for.
    pub native: Vec<String>,
    /// Whether it carries SPIR-V (or LLVM IR).
    pub spirv: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    /// `neo` or `sycl`.
    pub by: String,
    pub dir: String,
}

/// A loaded object, by path and build id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Library {
    pub path: String,
    pub build_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// One stack that launched a kernel (schema 5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caller {
    /// The processes whose first launch of the kernel (or first from
    /// another call site) had this stack.
    pub processes: u64,
    /// Its frames, innermost first, from the first outside xpu-asm and
    /// the runtimes (the user's first frame).
    pub frames: Vec<Frame>,
    /// The frames of xpu-asm and the runtimes folded away below it.
    pub folded: usize,
    /// The framework's operation among `frames` (`at::native::...`,
    /// `dpnp::...`), by index.
    pub op: Option<usize>,
}

/// The callers listed per kernel at most.
pub const LISTED_CALLERS: usize = 8;
