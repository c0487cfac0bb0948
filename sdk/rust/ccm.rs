//! ccm.rs: write a ccm resource plugin in Rust. One file, the standard
//! library only (no crates), for the target `wasm32-unknown-unknown`; it
//! makes no WASI calls.
//!
//! A plugin is a WebAssembly module following the Extism ABI (the kernel in
//! the import module "extism:host/env") that exports ccm_describe,
//! ccm_validate, ccm_status and ccm_apply. The documents are the JSON of
//! sdk/abi; host calls live in the import module "extism:host/user"
//! (ccm_fs_stat, ccm_fs_read, ...), each taking the kernel offset of a JSON
//! request and returning one of a JSON reply {"ok": {...}} or
//! {"error": {"code", "message"}}. The contract is docs/plugins.md;
//! sdk/examples/rust-sysctl_conf is a complete plugin.
//!
//! Use it as a module of the plugin's crate and implement `Resource`:
//!
//! ```ignore
//! #[path = "ccm.rs"]
//! mod ccm;
//! use ccm::{Json, Request, Resource};
//!
//! struct MyType;
//! impl Resource for MyType {
//!     fn info() -> Json { Json::parse(r#"{"abi":1,"type":"my_type",...}"#).unwrap() }
//!     fn validate(props: &Json) -> Vec<String> { ... }
//!     fn status(req: &Request) -> Json { ... }
//!     fn apply(req: &Request) -> Json { ... }
//! }
//! ccm_plugin!(MyType);
//! ```
//!
//! Build (Debian: apt-get install rustc libstd-rust-dev-wasm32 lld-14):
//!
//! ```text
//! rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib \
//!   -C opt-level=z -C lto -C codegen-units=1 -C panic=abort -C strip=symbols \
//!   -o my_type.wasm my_type.rs
//! ```
//!
//! A panic is logged through ccm_log (level error, with its message and
//! place) before the module traps; the host then reports the trap and
//! discards the instance.

#![allow(dead_code)]

use std::fmt::{self, Write as _};

/// ABI is the plugin ABI this file speaks (PluginInfo "abi").
pub const ABI: u32 = 1;

// ---- Extism kernel imports (extism:host/env) -------------------------------

mod kernel {
    #[link(wasm_import_module = "extism:host/env")]
    extern "C" {
        pub fn input_length() -> u64;
        pub fn input_load_u8(offset: u64) -> u32;
        pub fn input_load_u64(offset: u64) -> u64;
        pub fn alloc(length: u64) -> u64;
        pub fn free(offset: u64);
        pub fn length(offset: u64) -> u64;
        pub fn load_u8(offset: u64) -> u32;
        pub fn load_u64(offset: u64) -> u64;
        pub fn store_u8(offset: u64, value: u32);
        pub fn store_u64(offset: u64, value: u64);
        pub fn output_set(offset: u64, length: u64);
        pub fn error_set(offset: u64);
    }
}

// ---- ccm host calls (extism:host/user) --------------------------------------

mod host {
    #[link(wasm_import_module = "extism:host/user")]
    extern "C" {
        pub fn ccm_fs_stat(request: u64) -> u64;
        pub fn ccm_fs_read(request: u64) -> u64;
        pub fn ccm_fs_write(request: u64) -> u64;
        pub fn ccm_fs_mkdir(request: u64) -> u64;
        pub fn ccm_fs_remove(request: u64) -> u64;
        pub fn ccm_fs_chown(request: u64) -> u64;
        pub fn ccm_fs_chmod(request: u64) -> u64;
        pub fn ccm_fs_list(request: u64) -> u64;
        pub fn ccm_exec(request: u64) -> u64;
        pub fn ccm_user_lookup(request: u64) -> u64;
        pub fn ccm_group_lookup(request: u64) -> u64;
        pub fn ccm_lookup(request: u64) -> u64;
        pub fn ccm_log(request: u64) -> u64;
    }
}

/// HostCall names one of ccm's host calls (docs/plugins.md, "Host calls").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostCall {
    FsStat,
    FsRead,
    FsWrite,
    FsMkdir,
    FsRemove,
    FsChown,
    FsChmod,
    FsList,
    Exec,
    UserLookup,
    GroupLookup,
    Lookup,
    Log,
}

/// CallError is a host call's refusal or failure: code is one of sdk/abi's
/// error codes (denied, not_found, invalid, io, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct CallError {
    pub code: String,
    pub message: String,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// call makes host call c with the JSON request req and returns the "ok"
/// document of its reply.
pub fn call(c: HostCall, req: &Json) -> Result<Json, CallError> {
    let off = block_put(req.to_string().as_bytes());
    let reply = unsafe {
        match c {
            HostCall::FsStat => host::ccm_fs_stat(off),
            HostCall::FsRead => host::ccm_fs_read(off),
            HostCall::FsWrite => host::ccm_fs_write(off),
            HostCall::FsMkdir => host::ccm_fs_mkdir(off),
            HostCall::FsRemove => host::ccm_fs_remove(off),
            HostCall::FsChown => host::ccm_fs_chown(off),
            HostCall::FsChmod => host::ccm_fs_chmod(off),
            HostCall::FsList => host::ccm_fs_list(off),
            HostCall::Exec => host::ccm_exec(off),
            HostCall::UserLookup => host::ccm_user_lookup(off),
            HostCall::GroupLookup => host::ccm_group_lookup(off),
            HostCall::Lookup => host::ccm_lookup(off),
            HostCall::Log => host::ccm_log(off),
        }
    };
    let fail = |m: &str| CallError { code: "io".into(), message: m.into() };
    if reply == 0 {
        return Err(fail("the host returned no reply"));
    }
    let raw = block_get(reply);
    unsafe { kernel::free(reply) };
    let doc = Json::parse_bytes(&raw).map_err(|_| fail("malformed host reply"))?;
    if let Some(ok) = doc.get("ok") {
        return Ok(ok.clone());
    }
    let err = doc.get("error").ok_or_else(|| fail("malformed host reply"))?;
    Err(CallError {
        code: err.str_at("code").unwrap_or("io").to_string(),
        message: err.str_at("message").unwrap_or("malformed host reply").to_string(),
    })
}

/// log writes a line to the host log, attributed to the resource; level is
/// debug, info, warn or error.
pub fn log(level: &str, message: &str) {
    let _ = call(HostCall::Log, &Json::obj(vec![("level", level.into()), ("message", message.into())]));
}

/// Stat is what ccm_fs_stat says of a path (a symlink is not followed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stat {
    pub exists: bool,
    /// file, directory, symlink or other; empty when it does not exist
    pub kind: String,
    pub mode: u32,
    pub uid: u64,
    pub gid: u64,
}

/// fs_stat stats path.
pub fn fs_stat(path: &str) -> Result<Stat, CallError> {
    let r = call(HostCall::FsStat, &Json::obj(vec![("path", path.into())]))?;
    Ok(Stat {
        exists: r.get("exists").and_then(Json::as_bool).unwrap_or(false),
        kind: r.str_at("type").unwrap_or("").to_string(),
        mode: r.get("mode").and_then(Json::as_u64).unwrap_or(0) as u32,
        uid: r.get("uid").and_then(Json::as_u64).unwrap_or(0),
        gid: r.get("gid").and_then(Json::as_u64).unwrap_or(0),
    })
}

/// fs_read reads the regular file at path.
pub fn fs_read(path: &str) -> Result<Vec<u8>, CallError> {
    let r = call(HostCall::FsRead, &Json::obj(vec![("path", path.into())]))?;
    let content = r.str_at("content").unwrap_or("");
    base64_decode(content).ok_or_else(|| CallError { code: "io".into(), message: "fs_read: content is not base64".into() })
}

/// fs_write replaces path's content atomically, with mode and, when given,
/// owner and group (names or all-digit ids).
pub fn fs_write(path: &str, content: &[u8], mode: u32, owner: Option<&str>, group: Option<&str>) -> Result<(), CallError> {
    let mut req = vec![
        ("path", Json::from(path)),
        ("content", Json::Str(base64_encode(content))),
        ("mode", Json::Num(mode.to_string())),
    ];
    if let Some(o) = owner {
        req.push(("owner", o.into()));
    }
    if let Some(g) = group {
        req.push(("group", g.into()));
    }
    call(HostCall::FsWrite, &Json::obj(req)).map(|_| ())
}

// ---- the plugin ---------------------------------------------------------------

/// Request is the input of ccm_status and ccm_apply (sdk/abi Request).
pub struct Request {
    pub doc: Json,
    pub name: String,
    pub properties: Json,
    /// the properties' ensure, or "" when unset (the type's default applies)
    pub ensure: String,
    pub noop: bool,
    pub health_check_only: bool,
}

/// Resource is what a plugin author implements: one resource type.
pub trait Resource {
    /// info is the PluginInfo document (sdk/abi); no host calls.
    fn info() -> Json;
    /// validate checks the properties and returns every problem; no host calls.
    fn validate(props: &Json) -> Vec<String>;
    /// status reads the current state and returns a StatusResponse document.
    fn status(req: &Request) -> Json;
    /// apply reads, decides, acts (unless req.noop), verifies and returns a
    /// Result document; a failure goes in its "error".
    fn apply(req: &Request) -> Json;
}

/// ccm_plugin!(T) exports ccm_describe, ccm_validate, ccm_status and
/// ccm_apply for the Resource T. The module must be named ccm at the root of
/// the crate (`#[path = "ccm.rs"] mod ccm;`).
#[macro_export]
macro_rules! ccm_plugin {
    ($t:ty) => {
        #[no_mangle]
        pub extern "C" fn ccm_describe() -> i32 {
            $crate::ccm::run_describe::<$t>()
        }
        #[no_mangle]
        pub extern "C" fn ccm_validate() -> i32 {
            $crate::ccm::run_validate::<$t>()
        }
        #[no_mangle]
        pub extern "C" fn ccm_status() -> i32 {
            $crate::ccm::run_status::<$t>()
        }
        #[no_mangle]
        pub extern "C" fn ccm_apply() -> i32 {
            $crate::ccm::run_apply::<$t>()
        }
    };
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let mut msg = String::from("plugin panicked");
            if let Some(s) = info.payload().downcast_ref::<&str>() {
                let _ = write!(msg, ": {}", s);
            } else if let Some(s) = info.payload().downcast_ref::<String>() {
                let _ = write!(msg, ": {}", s);
            }
            if let Some(l) = info.location() {
                let _ = write!(msg, " at {}:{}", l.file(), l.line());
            }
            log("error", &msg);
        }));
    });
}

#[doc(hidden)]
pub fn run_describe<T: Resource>() -> i32 {
    install_panic_hook();
    output(&T::info())
}

#[doc(hidden)]
pub fn run_validate<T: Resource>() -> i32 {
    install_panic_hook();
    let req = match input("ccm_validate") {
        Ok(j) => j,
        Err(rc) => return rc,
    };
    let errs = T::validate(req.get("properties").unwrap_or(&Json::Null));
    output(&Json::obj(vec![("errors", Json::Arr(errs.into_iter().map(Json::Str).collect()))]))
}

#[doc(hidden)]
pub fn run_status<T: Resource>() -> i32 {
    run_request::<T>("ccm_status", T::status)
}

#[doc(hidden)]
pub fn run_apply<T: Resource>() -> i32 {
    run_request::<T>("ccm_apply", T::apply)
}

fn run_request<T: Resource>(export: &str, f: fn(&Request) -> Json) -> i32 {
    install_panic_hook();
    let doc = match input(export) {
        Ok(j) => j,
        Err(rc) => return rc,
    };
    let properties = doc.get("properties").cloned().unwrap_or(Json::Obj(Vec::new()));
    let errs = T::validate(&properties);
    if !errs.is_empty() {
        return output(&error_result(&format!("invalid properties: {}", errs.join("; "))));
    }
    let req = Request {
        name: doc.str_at("name").unwrap_or("").to_string(),
        ensure: properties.str_at("ensure").unwrap_or("").to_string(),
        noop: doc.get("noop").and_then(Json::as_bool).unwrap_or(false),
        health_check_only: doc.get("health_check_only").and_then(Json::as_bool).unwrap_or(false),
        properties,
        doc,
    };
    output(&f(&req))
}

/// error_result is a Result (or StatusResponse) document that failed with message.
pub fn error_result(message: &str) -> Json {
    Json::obj(vec![("error", message.into()), ("state", Json::Obj(Vec::new()))])
}

fn input(export: &str) -> Result<Json, i32> {
    let n = unsafe { kernel::input_length() };
    let mut buf = vec![0u8; n as usize];
    let mut i = 0u64;
    while i + 8 <= n {
        let w = unsafe { kernel::input_load_u64(i) };
        buf[i as usize..i as usize + 8].copy_from_slice(&w.to_le_bytes());
        i += 8;
    }
    while i < n {
        buf[i as usize] = unsafe { kernel::input_load_u8(i) } as u8;
        i += 1;
    }
    Json::parse_bytes(&buf).map_err(|e| fail(&format!("{} input is not a JSON document: {}", export, e)))
}

fn output(doc: &Json) -> i32 {
    let s = doc.to_string();
    unsafe { kernel::output_set(block_put(s.as_bytes()), s.len() as u64) };
    0
}

/// fail fails the export call itself (not the resource) with message; the
/// export returns what it returns.
fn fail(message: &str) -> i32 {
    unsafe { kernel::error_set(block_put(message.as_bytes())) };
    1
}

fn block_put(b: &[u8]) -> u64 {
    let off = unsafe { kernel::alloc(b.len() as u64) };
    if off == 0 {
        return 0;
    }
    let mut chunks = b.chunks_exact(8);
    let mut i = off;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        unsafe { kernel::store_u64(i, u64::from_le_bytes(w)) };
        i += 8;
    }
    for &c in chunks.remainder() {
        unsafe { kernel::store_u8(i, c as u32) };
        i += 1;
    }
    off
}

fn block_get(off: u64) -> Vec<u8> {
    let n = unsafe { kernel::length(off) };
    let mut buf = Vec::with_capacity(n as usize);
    let mut i = 0u64;
    while i + 8 <= n {
        buf.extend_from_slice(&unsafe { kernel::load_u64(off + i) }.to_le_bytes());
        i += 8;
    }
    while i < n {
        buf.push(unsafe { kernel::load_u8(off + i) } as u8);
        i += 1;
    }
    buf
}

// ---- JSON ---------------------------------------------------------------------

/// Json is a JSON value. Objects keep their members in order. A number
/// keeps its JSON text (no floating point code in the module): read it with
/// as_u64, or parse the text.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::Str(s.to_string())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::Str(s)
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}

impl Json {
    /// obj builds an object from (name, value) pairs.
    pub fn obj(members: Vec<(&str, Json)>) -> Json {
        Json::Obj(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// get returns member name of an object.
    pub fn get(&self, name: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// str_at returns member name of an object when it is a string.
    pub fn str_at(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Json::as_str)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// as_u64 is a non-negative integral number.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// text is a scalar as a manifest author wrote it: a string as it is, a
    /// number or boolean in JSON form; None for null, arrays and objects.
    pub fn text(&self) -> Option<String> {
        match self {
            Json::Str(s) => Some(s.clone()),
            Json::Num(_) | Json::Bool(_) => Some(self.to_string()),
            _ => None,
        }
    }

    /// parse reads exactly one JSON value.
    pub fn parse(s: &str) -> Result<Json, String> {
        Json::parse_bytes(s.as_bytes())
    }

    pub fn parse_bytes(b: &[u8]) -> Result<Json, String> {
        let mut p = Parser { b, i: 0 };
        let v = p.value(0)?;
        p.ws();
        if p.i != b.len() {
            return Err(format!("unexpected data at byte {}", p.i));
        }
        Ok(v)
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{}", b),
            Json::Num(n) => f.write_str(n),
            Json::Str(s) => write_string(f, s),
            Json::Arr(a) => {
                f.write_char('[')?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write!(f, "{}", v)?;
                }
                f.write_char(']')
            }
            Json::Obj(m) => {
                f.write_char('{')?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write_string(f, k)?;
                    write!(f, ":{}", v)?;
                }
                f.write_char('}')
            }
        }
    }
}

fn write_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{} at byte {}", what, self.i))
    }

    fn lit(&mut self, word: &str, v: Json) -> Result<Json, String> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            self.err("invalid literal")
        }
    }

    // Nesting is bounded so that a hostile document cannot exhaust the stack.
    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > 256 {
            return self.err("nested too deeply");
        }
        self.ws();
        match self.b.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'n') => self.lit("null", Json::Null),
            Some(b't') => self.lit("true", Json::Bool(true)),
            Some(b'f') => self.lit("false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::Str),
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Arr(a));
                }
                loop {
                    a.push(self.value(depth + 1)?);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Arr(a));
                        }
                        _ => return self.err("expected , or ]"),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut m = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Obj(m));
                }
                loop {
                    self.ws();
                    if self.b.get(self.i) != Some(&b'"') {
                        return self.err("expected a member name");
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        return self.err("expected :");
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    m.push((k, v));
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Obj(m));
                        }
                        _ => return self.err("expected , or }"),
                    }
                }
            }
            Some(_) => {
                let start = self.i;
                while self.i < self.b.len() && matches!(self.b[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    self.i += 1;
                }
                let s = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
                if valid_number(s) {
                    Ok(Json::Num(s.to_string()))
                } else {
                    self.i = start;
                    self.err("invalid value")
                }
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.b.get(self.i..self.i + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.i += 4;
        Some(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            let c = match self.b.get(self.i) {
                None => return self.err("unterminated string"),
                Some(&c) => c,
            };
            self.i += 1;
            match c {
                b'"' => return Ok(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    let e = match self.b.get(self.i) {
                        None => return self.err("unterminated string"),
                        Some(&e) => e,
                    };
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let mut r = self.hex4().unwrap_or(0xFFFD);
                            if (0xD800..0xDC00).contains(&r) && self.b[self.i..].starts_with(b"\\u") {
                                let save = self.i;
                                self.i += 2;
                                match self.hex4() {
                                    Some(lo) if (0xDC00..0xE000).contains(&lo) => r = 0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00),
                                    _ => self.i = save,
                                }
                            }
                            let ch = char::from_u32(r).unwrap_or('\u{FFFD}');
                            let mut tmp = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                        }
                        other => out.push(other), // \" \\ \/
                    }
                }
                c => out.push(c),
            }
        }
    }
}

/// valid_number checks the JSON number grammar:
/// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
fn valid_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    if b.get(i) == Some(&b'0') {
        i += 1;
    } else if !digits(&mut i) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

// ---- base64 (the encoding of byte fields: fs_read and fs_write content) --------

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn base64_encode(b: &[u8]) -> String {
    let mut s = String::with_capacity((b.len() + 2) / 3 * 4);
    for c in b.chunks(3) {
        let v = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        s.push(B64[(v >> 18) as usize] as char);
        s.push(B64[(v >> 12 & 63) as usize] as char);
        s.push(if c.len() > 1 { B64[(v >> 6 & 63) as usize] as char } else { '=' });
        s.push(if c.len() > 2 { B64[(v & 63) as usize] as char } else { '=' });
    }
    s
}

pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        let d = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6 | d as u32) & 0xFFFF;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}
