//! `native::parse` on any bytes, for no device or a PVC, TGLLP or DG2 one:
//! never a panic, nothing allocated in proportion to a size the input
//! claims, and a result that holds together: every kernel has a name, its
//! code comes from the input (the kernels' code together is no longer than
//! the input), a fat binary's member is named, a device gives a platform.
//! Each kernel's `.asm` text ([`native::render_asm`] of a fixed
//! disassembly) has the fixed text's instructions and a header that names
//! the kernel. IGA is not called: it is too slow for a fuzz loop, and its
//! input is the code checked here.
//!
//! Input: one byte choosing the device (B % 4: none, pvc, tgllp, dg2), then
//! the binary.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xpu_asm_isa::header::parse_own_header;
use xpu_asm_isa::native::{self, Device, NativeError};

const DISASSEMBLY: &str = "L0:\n(W)     mov (16|M0)   r1.0<1>:ud  0x0:ud\n        jmpi   L0   {I@1}\n        send.gtwy (8|M0)  null  r127  null:0  0x0  0x02000010  {EOT}\n";

fuzz_target!(|data: &[u8]| {
    let Some((&b, bytes)) = data.split_first() else {
        return;
    };
    let device = ["", "pvc", "tgllp", "dg2"][usize::from(b % 4)];
    let device = (!device.is_empty()).then(|| Device {
        product: Some(device.to_string()),
        ..Device::default()
    });
    let program = match native::parse(bytes, device.as_ref()) {
        Ok(p) => p,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            if let NativeError::NoEntryForDevice { entries, .. } = &e {
                assert!(entries
                    .iter()
                    .all(|n| !n.is_empty() && !n.starts_with("pad_")));
            }
            return;
        }
    };
    let mut code_total = 0usize;
    for k in &program.kernels {
        assert!(!k.name.is_empty(), "a kernel without a name: {program:?}");
        assert!(!k.name.contains(&0), "{:?}", k.name);
        assert!(k.code.len() <= bytes.len());
        code_total += k.code.len();
    }
    assert!(
        code_total <= bytes.len(),
        "{code_total} bytes of code from {} bytes of input",
        bytes.len()
    );
    match &program.fat_entry {
        Some(entry) => {
            assert!(bytes.starts_with(b"!<arch>\n"));
            assert!(!entry.is_empty() && !entry.starts_with("pad_") && entry != "generic_ir");
        }
        None => assert!(!bytes.starts_with(b"!<arch>\n")),
    }
    if device.is_some() {
        assert!(program.platform.is_some(), "{program:?}");
    }
    if let Some(p) = &program.platform {
        assert!(!p.name.is_empty());
    }
    let want = native::instructions(DISASSEMBLY);
    for k in &program.kernels {
        let asm = native::render_asm(k, &program, DISASSEMBLY, &native::SourceFiles::default());
        assert!(asm.starts_with("//.kernel "));
        assert!(asm.ends_with(DISASSEMBLY), "{asm}");
        assert_eq!(native::instructions(&asm), want, "{asm}");
        let h = parse_own_header(asm.as_bytes());
        assert!(h.kernel.is_some(), "{asm}");
        let plain = std::str::from_utf8(&k.name)
            .is_ok_and(|n| !n.contains(['\n', '\r']));
        if plain {
            assert_eq!(h.kernel.as_deref(), Some(k.name.as_slice()), "{asm}");
            assert_eq!(h.instructions, Some(want.len() as u64), "{asm}");
            assert_eq!(h.grf, k.grf, "{asm}");
            assert_eq!(h.spill_bytes, k.spill_bytes, "{asm}");
        }
    }
});
