//! Call stacks symbolized: each return address to the loaded object it
//! fell in (the record's `object` events) and, read from that object's
//! file when its build id is the one the process had loaded, to its
//! function (demangled), file and line where the object has line
//! information, inlined calls included (addr2line, over gimli and
//! object); else to the nearest symbol of its symbol table.

use addr2line::Loader;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use xpu_asm_record::origins::Object;

/// One frame of a stack, symbolized.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Frame {
    /// The function, demangled (null: the object's file has no symbol
    /// for it, or could not be read).
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The object's path (the program's own, for the program).
    pub object: String,
    /// The return address's offset in the object (its address for a
    /// program not built as PIE).
    pub offset: u64,
}

/// An object's file opened: its reader and its sized symbols.
type Opened = (Loader, Sized);

/// Symbolizes stacks, opening each object's file once.
#[derive(Default)]
pub struct Symbolizer {
    files: HashMap<(Vec<u8>, String), Option<Opened>>,
    /// What could not be read, one line per object.
    pub problems: BTreeSet<String>,
}

impl Symbolizer {
    /// The frames of `stack` (return addresses, innermost first) of a
    /// process whose objects are `objects` and whose program is `exe`.
    pub fn stack(
        &mut self,
        objects: &BTreeMap<u32, Object>,
        exe: &str,
        stack: &[u64],
    ) -> Vec<Frame> {
        stack
            .iter()
            .flat_map(|&addr| self.frames(objects, exe, addr))
            .collect()
    }

    /// The frames of one return address: the inlined calls there first.
    fn frames(&mut self, objects: &BTreeMap<u32, Object>, exe: &str, addr: u64) -> Vec<Frame> {
        let Some(o) = objects.values().find(|o| (o.start..o.end).contains(&addr)) else {
            return vec![Frame {
                function: None,
                file: None,
                line: None,
                object: String::new(),
                offset: addr,
            }];
        };
        let path = match o.path.is_empty() {
            true => exe.to_string(),
            false => String::from_utf8_lossy(&o.path).into_owned(),
        };
        // A return address: the call is the byte before it.
        let probe = addr.wrapping_sub(o.base).wrapping_sub(1);
        let plain = Frame {
            function: None,
            file: None,
            line: None,
            object: path.clone(),
            offset: probe + 1,
        };
        let Some((loader, sized)) = self.loader(&path, &o.build_id) else {
            return vec![plain];
        };
        let mut out = Vec::new();
        if let Ok(mut frames) = loader.find_frames(probe) {
            while let Ok(Some(f)) = frames.next() {
                out.push(Frame {
                    function: f
                        .function
                        .as_ref()
                        .and_then(|n| n.demangle().ok())
                        .map(|n| n.into_owned()),
                    file: f.location.as_ref().and_then(|l| l.file).map(str::to_string),
                    line: f.location.as_ref().and_then(|l| l.line),
                    ..plain.clone()
                });
            }
        }
        if out.iter().all(|f| f.function.is_none()) {
            // The nearest symbol, only where it spans the address: a
            // stripped library's exported symbols do not name its own
            // functions.
            let function = loader
                .find_symbol(probe)
                .filter(|_| sized.spans(probe))
                .map(|s| addr2line::demangle_auto(s.into(), None).into_owned());
            let location = loader.find_location(probe).ok().flatten();
            out = vec![Frame {
                function,
                file: location.as_ref().and_then(|l| l.file).map(str::to_string),
                line: location.and_then(|l| l.line),
                ..plain
            }];
        }
        out
    }

    /// The object's file, opened once, when its build id is `build_id`.
    fn loader(&mut self, path: &str, build_id: &str) -> Option<&(Loader, Sized)> {
        let key = (path.as_bytes().to_vec(), build_id.to_string());
        if !self.files.contains_key(&key) {
            let opened = open(path, build_id);
            if let Err(e) = &opened {
                self.problems.insert(format!("{path}: {e}"));
            }
            self.files.insert(key.clone(), opened.ok());
        }
        self.files.get(&key)?.as_ref()
    }
}

/// The address ranges of an object's sized function symbols (its symbol
/// table's and its dynamic one's), sorted.
#[derive(Debug, Default)]
pub struct Sized(Vec<(u64, u64)>);

impl Sized {
    fn of(obj: &object::File) -> Sized {
        use object::{Object as _, ObjectSymbol};
        let mut v: Vec<(u64, u64)> = obj
            .symbols()
            .chain(obj.dynamic_symbols())
            .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
            .map(|s| (s.address(), s.address() + s.size()))
            .collect();
        v.sort_unstable();
        Sized(v)
    }

    /// Whether some symbol spans `addr`.
    fn spans(&self, addr: u64) -> bool {
        let i = self.0.partition_point(|&(start, _)| start <= addr);
        self.0[..i]
            .iter()
            .rev()
            .take(64)
            .any(|&(_, end)| addr < end)
    }
}

/// `path`'s loader, once its build id is checked.
fn open(path: &str, build_id: &str) -> Result<(Loader, Sized), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot be read ({e})"))?;
    // SAFETY: the map is only read, here; a file changed under it gives
    // wrong symbols or a parse error, which the build id check below
    // and the readers' bounds keep from going further.
    let map =
        unsafe { memmap2::Mmap::map(&file) }.map_err(|e| format!("cannot be mapped ({e})"))?;
    let obj = object::File::parse(&*map).map_err(|e| format!("not an object file ({e})"))?;
    let found = object::Object::build_id(&obj)
        .ok()
        .flatten()
        .map(xpu_asm_record::hex)
        .unwrap_or_default();
    if found != build_id {
        return Err(format!(
            "build id {found}, the process had {build_id} loaded: the file changed since the run; its frames are not named"
        ));
    }
    let sized = Sized::of(&obj);
    Loader::new(path)
        .map(|l| (l, sized))
        .map_err(|e| format!("cannot be read for symbols ({e})"))
}
