//! Code that only a panic reaches, replaced by a trap before binaryen optimizes the module.
//!
//! bridge.js is built `no_std` with a panic handler that traps without reading the panic's
//! message (`sdk/src/runtime.rs`), and it formats nothing itself. Yet the compiler keeps the
//! machinery that would format a message: a panic's arguments point at `Display` functions
//! (`<u32 as Display>::fmt`, `<BorrowError as Display>::fmt`, …), their addresses sit in the
//! function table, and binaryen cannot tell that nothing ever calls them through it. Nor can it
//! tell that js-sys's JSPI task executor is dead: the SDK spawns no futures, but the executor's
//! waker functions are in the table too. Together that was about 2.5 KB of the module, some
//! 1.1 KB of bridge.js after gzip.
//!
//! [`trap_panic_machinery`] gives every such function the body `unreachable`, chosen by its name
//! in the module's `name` section (which `wasm-bindgen` keeps unless told otherwise): the
//! functions of `core::panicking` and core's `panic_*` helpers in `core::cell`, which end in the
//! trapping panic handler anyway; everything in `core::fmt`, formatting included, which only those
//! reach; and js-sys's `futures::jspi` module. Then binaryen removes what only they called, and
//! drops the names. A panic still traps, at its call rather than in the handler.

use crate::Error;

/// Replaces the body of every function that only a panic, or js-sys's JSPI executor, reaches
/// (see the module's documentation) with `unreachable`. Returns the new module and the names of
/// the functions replaced. The module must have a `name` section with function names.
pub fn trap_panic_machinery(wasm: &[u8]) -> Result<(Vec<u8>, Vec<String>), Error> {
    let sections = sections(wasm)?;
    let imported = imported_functions(&sections)?;
    let names = function_names(&sections)?;
    let mut trapped = Vec::new();
    let mut out = wasm
        .get(..8)
        .ok_or_else(|| malformed("no header"))?
        .to_vec();
    for section in &sections {
        if section.id != CODE {
            out.push(section.id);
            push_leb(&mut out, len_u32(section.body.len())?);
            out.extend_from_slice(section.body);
            continue;
        }
        let mut body = Vec::with_capacity(section.body.len());
        let (count, mut at) = leb(section.body, 0)?;
        push_leb(&mut body, count);
        for entry in 0..count {
            let (size, start) = leb(section.body, at)?;
            let end = start
                .checked_add(usize::try_from(size).map_err(|_| malformed("a body size"))?)
                .filter(|end| *end <= section.body.len())
                .ok_or_else(|| malformed("a function body runs past its section"))?;
            let index = imported
                .checked_add(entry)
                .ok_or_else(|| malformed("too many functions"))?;
            match names.iter().find(|(i, _)| *i == index) {
                Some((_, name)) if only_a_panic_reaches(name) => {
                    // No locals; `unreachable`; `end`.
                    push_leb(&mut body, 3);
                    body.extend_from_slice(&[0x00, 0x00, 0x0b]);
                    trapped.push(name.clone());
                }
                _ => {
                    push_leb(&mut body, size);
                    body.extend_from_slice(&section.body[start..end]);
                }
            }
            at = end;
        }
        out.push(CODE);
        push_leb(&mut out, len_u32(body.len())?);
        out.extend_from_slice(&body);
    }
    Ok((out, trapped))
}

/// Whether the function named `name` (as in the `name` section, e.g.
/// `<core[c5930c85a12de822]::fmt::Formatter>::pad`) is one that only a panic, or js-sys's JSPI
/// executor, reaches.
pub fn only_a_panic_reaches(name: &str) -> bool {
    let name = without_crate_hashes(name);
    let in_module = |module: &str| {
        name.starts_with(module)
            || name
                .strip_prefix('<')
                .is_some_and(|inner| inner.starts_with(module))
    };
    let last_segment = name.rsplit("::").find(|s| !is_hash_suffix(s)).unwrap_or("");
    in_module("core::panicking::")
        || (in_module("core::cell::") && last_segment.starts_with("panic_"))
        || in_module("core::fmt::")
        || (name.starts_with('<') && name.contains(" as core::fmt::"))
        || in_module("js_sys::futures::jspi::")
}

/// `name` without the hashes v0 mangling puts after crate names (`core[c5930c85a12de822]`).
fn without_crate_hashes(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close) if close > 0 && after[..close].bytes().all(|b| b.is_ascii_hexdigit()) => {
                out.push_str(&rest[..open]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `h0123456789abcdef` that legacy mangling ends a path with.
fn is_hash_suffix(segment: &str) -> bool {
    segment.len() == 17
        && segment.starts_with('h')
        && segment[1..].bytes().all(|b| b.is_ascii_hexdigit())
}

const CUSTOM: u8 = 0;
const IMPORT: u8 = 2;
const CODE: u8 = 10;

/// One section: its id and its contents.
struct Section<'a> {
    id: u8,
    body: &'a [u8],
}

fn sections(wasm: &[u8]) -> Result<Vec<Section<'_>>, Error> {
    if wasm.get(..4) != Some(b"\0asm".as_slice()) {
        return Err(malformed("no wasm header"));
    }
    let mut sections = Vec::new();
    let mut at = 8;
    while at < wasm.len() {
        let id = wasm[at];
        let (size, start) = leb(wasm, at + 1)?;
        let end = start
            .checked_add(usize::try_from(size).map_err(|_| malformed("a section size"))?)
            .filter(|end| *end <= wasm.len())
            .ok_or_else(|| malformed("a section runs past the module"))?;
        sections.push(Section {
            id,
            body: &wasm[start..end],
        });
        at = end;
    }
    Ok(sections)
}

/// How many functions the module imports (they come first in the function index space). Only
/// function imports are expected: `wasm-bindgen`'s modules import nothing else.
fn imported_functions(sections: &[Section<'_>]) -> Result<u32, Error> {
    let Some(section) = sections.iter().find(|s| s.id == IMPORT) else {
        return Ok(0);
    };
    let body = section.body;
    let (count, mut at) = leb(body, 0)?;
    for _ in 0..count {
        at = skip_name(body, at)?; // module
        at = skip_name(body, at)?; // field
        match body.get(at) {
            Some(0x00) => at = leb(body, at + 1)?.1,
            Some(kind) => {
                return Err(malformed(&format!(
                    "an import of kind {kind} where only functions are expected"
                )));
            }
            None => return Err(malformed("a truncated import")),
        }
    }
    Ok(count)
}

/// The function names of the `name` section: `(function index, name)`.
fn function_names(sections: &[Section<'_>]) -> Result<Vec<(u32, String)>, Error> {
    let section = sections
        .iter()
        .filter(|s| s.id == CUSTOM)
        .find(|s| read_name(s.body, 0).is_ok_and(|(name, _)| name == b"name"))
        .ok_or_else(|| {
            malformed("no `name` section (is wasm-bindgen run with --remove-name-section?)")
        })?;
    let body = section.body;
    let mut at = read_name(body, 0)?.1;
    while at < body.len() {
        let id = body[at];
        let (size, start) = leb(body, at + 1)?;
        let end = start
            .checked_add(usize::try_from(size).map_err(|_| malformed("a subsection size"))?)
            .filter(|end| *end <= body.len())
            .ok_or_else(|| malformed("a name subsection runs past its section"))?;
        if id == 1 {
            let names = &body[..end];
            let (count, mut at) = leb(names, start)?;
            let mut out = Vec::new();
            for _ in 0..count {
                let (index, next) = leb(names, at)?;
                let (name, next) = read_name(names, next)?;
                out.push((index, String::from_utf8_lossy(name).into_owned()));
                at = next;
            }
            return Ok(out);
        }
        at = end;
    }
    Err(malformed("a `name` section without function names"))
}

/// A length-prefixed name at `at`, and the position after it.
fn read_name(bytes: &[u8], at: usize) -> Result<(&[u8], usize), Error> {
    let (length, start) = leb(bytes, at)?;
    let end = start
        .checked_add(usize::try_from(length).map_err(|_| malformed("a name length"))?)
        .filter(|end| *end <= bytes.len())
        .ok_or_else(|| malformed("a name runs past its section"))?;
    Ok((&bytes[start..end], end))
}

fn skip_name(bytes: &[u8], at: usize) -> Result<usize, Error> {
    read_name(bytes, at).map(|(_, next)| next)
}

/// An unsigned LEB128 number at `at`, and the position after it.
fn leb(bytes: &[u8], at: usize) -> Result<(u32, usize), Error> {
    crate::leb128(bytes, at).ok_or_else(|| malformed("a truncated or overlong number"))
}

fn push_leb(out: &mut Vec<u8>, mut value: u32) {
    loop {
        let byte = u8::try_from(value & 0x7f).unwrap_or(0);
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn len_u32(length: usize) -> Result<u32, Error> {
    u32::try_from(length).map_err(|_| malformed("a section over 4 GiB"))
}

fn malformed(why: &str) -> Error {
    Error::Module(why.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panic_machinery_is_recognised_by_name() {
        for name in [
            "<core[c5930c85a12de822]::fmt::Formatter>::pad",
            "<core[c5930c85a12de822]::fmt::Formatter>::pad_integral::write_prefix",
            "<u32 as core[c5930c85a12de822]::fmt::Display>::fmt",
            "<core[c5930c85a12de822]::cell::BorrowError as core[c5930c85a12de822]::fmt::Display>::fmt",
            "core[c5930c85a12de822]::panicking::panic_fmt",
            "core[c5930c85a12de822]::cell::panic_already_mutably_borrowed",
            "core[c5930c85a12de822]::cell::lazy::panic_poisoned",
            "core::fmt::write::h0123456789abcdef",
            "core::panicking::panic_bounds_check::h0123456789abcdef",
            "js_sys::futures::jspi::SpawnedTask::wake::h0bc8d6ca7d9d09a7",
            "js_sys::futures::jspi::task_waker::raw_clone::hb2c5f9c68d6f1eac",
        ] {
            assert!(only_a_panic_reaches(name), "{name}");
        }
        for name in [
            "toolbridge_sdk::sdk::Sdk::run::h8469cfe7e4c53663",
            "core::cell::RefCell<T>::borrow_mut::h775a19d4657d6564",
            "core::ptr::drop_in_place<core::fmt::Arguments>::h0123456789abcdef",
            "core::ptr::drop_in_place<alloc::rc::Rc<js_sys::futures::jspi::SpawnedTask>>::h3ca99034cb690e4f",
            "js_sys::futures::queue::Queue::push_task::h0123456789abcdef",
            "wasm_bindgen::convert::closures::_::invoke::hcc0f2f53c0542538",
            "__externref_table_alloc",
            "mycrate[12]x::fmt",
        ] {
            assert!(!only_a_panic_reaches(name), "{name}");
        }
    }

    /// A module of one imported and three defined functions, named `imported`, `keep`,
    /// `core::fmt::write::h0123456789abcdef` and `core::panicking::panic`.
    fn module() -> Vec<u8> {
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        // Type section: one type, () -> ().
        wasm.extend_from_slice(&[1, 4, 1, 0x60, 0, 0]);
        // Import section: "m" "f", a function of type 0.
        wasm.extend_from_slice(&[2, 7, 1, 1, b'm', 1, b'f', 0, 0]);
        // Function section: three functions of type 0.
        wasm.extend_from_slice(&[3, 4, 3, 0, 0, 0]);
        // Code section: `call 0`, `i32.const 1; drop`, nothing.
        let bodies: [&[u8]; 3] = [&[0, 0x10, 0, 0x0b], &[0, 0x41, 1, 0x1a, 0x0b], &[0, 0x0b]];
        let mut code = vec![3];
        for body in bodies {
            code.push(u8::try_from(body.len()).unwrap());
            code.extend_from_slice(body);
        }
        wasm.push(CODE);
        wasm.push(u8::try_from(code.len()).unwrap());
        wasm.extend_from_slice(&code);
        // Name section with function names.
        let names = [
            "imported",
            "keep",
            "core::fmt::write::h0123456789abcdef",
            "core::panicking::panic",
        ];
        let mut subsection = vec![4];
        for (index, name) in names.iter().enumerate() {
            subsection.push(u8::try_from(index).unwrap());
            subsection.push(u8::try_from(name.len()).unwrap());
            subsection.extend_from_slice(name.as_bytes());
        }
        let mut custom = vec![4];
        custom.extend_from_slice(b"name");
        custom.push(1);
        custom.push(u8::try_from(subsection.len()).unwrap());
        custom.extend_from_slice(&subsection);
        wasm.push(CUSTOM);
        wasm.push(u8::try_from(custom.len()).unwrap());
        wasm.extend_from_slice(&custom);
        wasm
    }

    #[test]
    fn the_chosen_bodies_become_a_trap_and_the_rest_stays() {
        let wasm = module();
        let (out, trapped) = trap_panic_machinery(&wasm).unwrap();
        assert_eq!(
            trapped,
            [
                "core::fmt::write::h0123456789abcdef",
                "core::panicking::panic"
            ]
        );
        let code = sections(&out)
            .unwrap()
            .into_iter()
            .find(|s| s.id == CODE)
            .unwrap()
            .body
            .to_vec();
        // `keep` as it was (a call of the import), the other two `unreachable`.
        assert_eq!(code, [3, 4, 0, 0x10, 0, 0x0b, 3, 0, 0, 0x0b, 3, 0, 0, 0x0b]);
        // Every other section is as it was, in its place.
        let ids =
            |wasm: &[u8]| -> Vec<u8> { sections(wasm).unwrap().iter().map(|s| s.id).collect() };
        assert_eq!(ids(&out), ids(&wasm));
        assert_eq!(&out[..8], &wasm[..8]);
        // Again changes nothing more.
        let (again, _) = trap_panic_machinery(&out).unwrap();
        assert_eq!(again, out);
    }

    #[test]
    fn a_module_without_names_or_with_other_imports_is_refused() {
        let wasm = module();
        let mut unnamed = wasm[..8].to_vec();
        for section in sections(&wasm).unwrap().iter().filter(|s| s.id != CUSTOM) {
            unnamed.push(section.id);
            push_leb(&mut unnamed, len_u32(section.body.len()).unwrap());
            unnamed.extend_from_slice(section.body);
        }
        let error = trap_panic_machinery(&unnamed).unwrap_err();
        assert!(error.to_string().contains("no `name` section"), "{error}");
        let mut memory_import = wasm.clone();
        // The import's kind: a memory instead of a function.
        let kind = memory_import
            .windows(3)
            .position(|w| w == [1, b'f', 0])
            .unwrap()
            + 2;
        memory_import[kind] = 2;
        let error = trap_panic_machinery(&memory_import).unwrap_err();
        assert!(error.to_string().contains("kind 2"), "{error}");
        assert!(trap_panic_machinery(b"not wasm").is_err());
    }

    #[test]
    fn numbers_are_written_as_leb128() {
        for value in [0, 1, 127, 128, 300, 16_384, u32::MAX] {
            let mut out = Vec::new();
            push_leb(&mut out, value);
            assert_eq!(leb(&out, 0).unwrap(), (value, out.len()), "{value}");
        }
    }
}
