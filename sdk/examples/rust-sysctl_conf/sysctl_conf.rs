//! sysctl_conf: a ccm resource type written in Rust. It ensures that one
//! "key = value" line is present in (or absent from) a sysctl.d-style file,
//! leaving every other line as it was.
//!
//!   - sysctl_conf:
//!       - forwarding:
//!           path: /etc/sysctl.d/60-vendor.conf
//!           key: net.ipv4.ip_forward
//!           value: 1
//!
//! Build (scripts/build-examples.sh does exactly this):
//!
//!   rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib \
//!     -C opt-level=z -C lto -C codegen-units=1 -C panic=abort -C strip=symbols -D warnings \
//!     -o sysctl_conf.wasm sdk/examples/rust-sysctl_conf/sysctl_conf.rs
//!
//! It reads the file with ccm_fs_stat and ccm_fs_read and writes it with
//! ccm_fs_write (atomic, keeping the file's mode and owner). Loading the
//! values into the kernel (sysctl --system) is another resource's job, an
//! exec subscribed to this one.

#[path = "../../rust/ccm.rs"]
mod ccm;

use ccm::{Json, Request, Resource};

struct SysctlConf;

/// Spec holds the decoded properties.
struct Spec {
    path: String,
    key: String,
    value: String,
    present: bool,
}

fn spec(props: &Json) -> Result<Spec, Vec<String>> {
    let mut errs = Vec::new();
    let path = props.str_at("path").unwrap_or("").to_string();
    if !path.starts_with('/') {
        errs.push("path: must be an absolute path such as /etc/sysctl.d/60-app.conf".to_string());
    }
    let key = props.str_at("key").unwrap_or("").to_string();
    let key_ok = !key.is_empty()
        && !key.starts_with('-')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || "._-/*".contains(c));
    if !key_ok {
        errs.push("key: must be a sysctl name such as net.ipv4.ip_forward (letters, digits and . _ - / *)".to_string());
    }
    let present = props.str_at("ensure").unwrap_or("present") != "absent";
    let value = props.get("value").and_then(Json::text);
    match &value {
        None if present => errs.push("value: required with ensure present (a string, number or boolean)".to_string()),
        Some(v) if v.contains('\n') || v.contains('\r') => errs.push("value: must not contain a line break".to_string()),
        _ => {}
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Spec { path, key, value: value.unwrap_or_default().trim().to_string(), present })
}

/// setting returns the key and value of a "key = value" line (a leading "-",
/// sysctl's "ignore errors" mark, is not part of the key), or None for a
/// comment, a blank line or a line without "=".
fn setting(line: &str) -> Option<(&str, &str)> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
        return None;
    }
    let (k, v) = t.split_once('=')?;
    Some((k.trim().trim_start_matches('-').trim(), v.trim()))
}

/// current is the value the file gives key: the last line setting it wins,
/// as in sysctl.
fn current(text: &str, key: &str) -> Option<String> {
    text.lines().filter_map(setting).filter(|(k, _)| *k == key).last().map(|(_, v)| v.to_string())
}

/// edit returns the text with the spec applied: the first line setting the
/// key rewritten (or one appended), any later one removed; with ensure
/// absent every line setting it removed.
fn edit(text: &str, sp: &Spec) -> String {
    let mut out = String::with_capacity(text.len() + sp.key.len() + sp.value.len() + 4);
    let mut done = false;
    for line in text.split_inclusive('\n') {
        if matches!(setting(line), Some((k, _)) if k == sp.key) {
            if sp.present && !done {
                out.push_str(&format!("{} = {}\n", sp.key, sp.value));
                done = true;
            }
            continue;
        }
        out.push_str(line);
    }
    if sp.present && !done {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{} = {}\n", sp.key, sp.value));
    }
    out
}

/// converged: the file already says what the spec wants, in one line for
/// present (however it is spaced) and in none for absent.
fn converged(text: &str, sp: &Spec) -> bool {
    let mut lines = text.lines().filter_map(setting).filter(|(k, _)| *k == sp.key);
    match (lines.next(), lines.next()) {
        (None, _) => !sp.present,
        (Some((_, v)), None) => sp.present && v == sp.value,
        _ => false,
    }
}

struct File {
    stat: ccm::Stat,
    text: String,
}

fn read(path: &str) -> Result<File, String> {
    let stat = ccm::fs_stat(path).map_err(|e| format!("read {}: {}", path, e))?;
    if !stat.exists {
        return Ok(File { stat, text: String::new() });
    }
    if stat.kind != "file" {
        return Err(format!("{} is not a regular file (a symlink is not followed: point path at the file)", path));
    }
    let b = ccm::fs_read(path).map_err(|e| format!("read {}: {}", path, e))?;
    Ok(File { stat, text: String::from_utf8_lossy(&b).into_owned() })
}

fn state(sp: &Spec, text: &str) -> Json {
    let v = current(text, &sp.key).map(Json::Str).unwrap_or(Json::Null);
    Json::obj(vec![("path", sp.path.as_str().into()), ("key", sp.key.as_str().into()), ("value", v)])
}

fn ensure_of(sp: &Spec, text: &str) -> Json {
    if current(text, &sp.key).is_some() { "present" } else { "absent" }.into()
}

impl Resource for SysctlConf {
    fn info() -> Json {
        Json::parse(concat!(
            r#"{"abi":1,"type":"sysctl_conf","version":"0.1.0","providers":["posix"],"#,
            r#""ensure":["present","absent"],"default_ensure":"present","refresh":false,"#,
            r#""properties_schema":{"type":"object","required":["path","key"],"properties":{"#,
            r#""path":{"type":"string","description":"absolute path of the sysctl.d file"},"#,
            r#""key":{"type":"string","minLength":1,"description":"the sysctl name, such as net.ipv4.ip_forward"},"#,
            r#""value":{"type":["string","number","boolean"]}}},"#,
            r#""capabilities":{"fs_read":["/**"],"fs_write":["/**"]}}"#
        ))
        .expect("the PluginInfo document is valid JSON")
    }

    fn validate(props: &Json) -> Vec<String> {
        spec(props).err().unwrap_or_default()
    }

    fn status(req: &Request) -> Json {
        let sp = spec(&req.properties).expect("validated");
        match read(&sp.path) {
            Err(e) => ccm::error_result(&e),
            Ok(f) => Json::obj(vec![
                ("provider", "posix".into()),
                ("final_ensure", ensure_of(&sp, &f.text)),
                ("state", state(&sp, &f.text)),
            ]),
        }
    }

    fn apply(req: &Request) -> Json {
        if req.health_check_only {
            return Json::obj(vec![("changed", false.into())]);
        }
        let sp = spec(&req.properties).expect("validated");
        let f = match read(&sp.path) {
            Err(e) => return ccm::error_result(&e),
            Ok(f) => f,
        };
        let what = if sp.present {
            format!("set {} = {} in {}", sp.key, sp.value, sp.path)
        } else {
            format!("remove {} from {}", sp.key, sp.path)
        };
        let changed = !converged(&f.text, &sp);
        let mut out = vec![("provider", Json::from("posix")), ("changed", changed.into())];
        let mut text = f.text.clone();
        if changed && req.noop {
            out.push(("noop_message", format!("Would have {}", what).into()));
        } else if changed {
            let want = edit(&f.text, &sp);
            let (mode, owner, group) = if f.stat.exists {
                (f.stat.mode, Some(f.stat.uid.to_string()), Some(f.stat.gid.to_string()))
            } else {
                (0o644, None, None)
            };
            if let Err(e) = ccm::fs_write(&sp.path, want.as_bytes(), mode, owner.as_deref(), group.as_deref()) {
                return ccm::error_result(&format!("write {}: {}", sp.path, e));
            }
            // Converged? Read it back and look again.
            text = match read(&sp.path) {
                Err(e) => return ccm::error_result(&e),
                Ok(g) => g.text,
            };
            if !converged(&text, &sp) {
                return ccm::error_result("failed to reach desired state: the file still differs after the write");
            }
            out.push(("messages", Json::Arr(vec![what.into()])));
        }
        out.push(("final_ensure", ensure_of(&sp, &text)));
        out.push(("state", state(&sp, &text)));
        Json::obj(out)
    }
}

ccm_plugin!(SysctlConf);
