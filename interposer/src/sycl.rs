//! SYCL's device images: a program or library built by DPC++ registers
//! all of its device images with the SYCL runtime when it loads, by
//! calling `__sycl_register_lib` from its constructor. The interposer
//! stands in for that function (exported), forwards the call unchanged and
//! records, once per registration, each image's target (`spir64`,
//! `spir64_gen`, ...), format, options, size, first bytes and where its
//! bytes lie (the loaded object and the offset in it): the collector reads
//! the bytes of a native image from that object's file to tell the
//! devices it carries code for. Nothing is copied or hashed here.

// `hook!`'s form for a function of no result names its type, `()`.
#![allow(clippy::unused_unit)]

use crate::macros::hook;
use crate::state::origins::{Image, MAGIC_BYTES};
use std::ffi::{c_char, c_void, CStr};

/// `sycl_device_binary_struct` (the SYCL runtime's `compiler.hpp`), of
/// versions 1 and 2.
#[repr(C)]
pub struct DeviceBinary {
    pub version: u16,
    pub kind: u8,
    pub format: u8,
    pub target: *const c_char,
    pub compile_options: *const c_char,
    pub link_options: *const c_char,
    pub manifest_start: *const c_char,
    pub manifest_end: *const c_char,
    pub binary_start: *const u8,
    pub binary_end: *const u8,
    pub entries_begin: *const c_void,
    pub entries_end: *const c_void,
    pub property_sets_begin: *const c_void,
    pub property_sets_end: *const c_void,
}

/// The same, of version 3 (the runtime's preview, `libsycl-preview`):
/// without the manifest.
#[repr(C)]
pub struct DeviceBinaryV3 {
    pub version: u16,
    pub kind: u8,
    pub format: u8,
    pub target: *const c_char,
    pub compile_options: *const c_char,
    pub link_options: *const c_char,
    pub binary_start: *const u8,
    pub binary_end: *const u8,
    pub entries_begin: *const c_void,
    pub entries_end: *const c_void,
    pub property_sets_begin: *const c_void,
    pub property_sets_end: *const c_void,
}

/// `sycl_device_binaries_struct`: what `__sycl_register_lib` is given.
#[repr(C)]
pub struct DeviceBinaries {
    pub version: u16,
    pub count: u16,
    pub binaries: *const DeviceBinary,
    pub host_entries_begin: *const c_void,
    pub host_entries_end: *const c_void,
}

/// The most bytes of an image's options kept.
const MAX_OPTIONS: usize = 4096;
/// A C string, at most `max` bytes of it (NULL: empty).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char, max: usize) -> &'a [u8] {
    if p.is_null() {
        return &[];
    }
    // SAFETY: per this function's contract.
    let b = unsafe { CStr::from_ptr(p) }.to_bytes();
    &b[..b.len().min(max)]
}

/// The images of a registration.
///
/// # Safety
/// `desc` is NULL or what a compiler-built object passes to
/// `__sycl_register_lib`, alive for the call.
pub unsafe fn images<'a>(desc: *const DeviceBinaries) -> Vec<Image<'a>> {
    if desc.is_null() {
        return Vec::new();
    }
    // SAFETY: per this function's contract.
    let d = unsafe { &*desc };
    if d.binaries.is_null() || d.count == 0 {
        return Vec::new();
    }
    let n = d.count as usize;
    // SAFETY: every layout starts with the version.
    let version = unsafe { (*d.binaries).version };
    let fields: Vec<_> = match version {
        // SAFETY: `n` images of this version at `binaries`, per the runtime's contract.
        0..=2 => unsafe { std::slice::from_raw_parts(d.binaries, n) }
            .iter()
            .map(|b| {
                (
                    b.format,
                    b.target,
                    b.compile_options,
                    b.link_options,
                    b.binary_start,
                    b.binary_end,
                )
            })
            .collect(),
        // SAFETY: as above, of version 3.
        _ => unsafe { std::slice::from_raw_parts(d.binaries.cast::<DeviceBinaryV3>(), n) }
            .iter()
            .map(|b| {
                (
                    b.format,
                    b.target,
                    b.compile_options,
                    b.link_options,
                    b.binary_start,
                    b.binary_end,
                )
            })
            .collect(),
    };
    fields
        .into_iter()
        .map(|(format, target, compile, link, start_p, end_p)| {
            let (start, end) = (start_p as usize, end_p as usize);
            let size = end.saturating_sub(start);
            let magic = match start {
                0 => &[][..],
                // SAFETY: the image's bytes, `size` of them, are mapped.
                _ => unsafe { std::slice::from_raw_parts(start_p, size.min(MAGIC_BYTES)) },
            };
            // SAFETY: the image's strings, NUL-terminated or NULL.
            let (target, compile_options, link_options) = unsafe {
                (
                    text(target, 256),
                    text(compile, MAX_OPTIONS),
                    text(link, MAX_OPTIONS),
                )
            };
            Image {
                target,
                format,
                compile_options,
                link_options,
                start,
                size,
                magic,
            }
        })
        .collect()
}

hook!(__sycl_register_lib => sycl_register_lib(
    desc: *const DeviceBinaries
) -> (), ok(registered) true, missing (),
before {
    // SAFETY: the runtime's argument, alive for the call.
    let images = unsafe { images(desc) };
    crate::state::modules::sycl_images_registered(desc as usize, &images);
});
