// ccm.ts: write a ccm resource plugin in AssemblyScript, on top of
// @extism/as-pdk. It gives the four things a plugin needs beyond the PDK:
// a small JSON reader and string quoting, base64 for byte fields, the ccm
// host calls (namespace "extism:host/user", one JSON request in, one JSON
// reply out), and the export plumbing (input, output, failure, abort).
//
// The contract is docs/plugins.md; sdk/examples/as-file_line is a complete
// plugin. Import this file by its relative path and build with asc:
//
//   npx asc index.ts --path node_modules --outFile my_type.wasm \
//     --use abort=index/ccmAbort --optimize --shrinkLevel 2 --noAssert
//
// with, in index.ts:
//
//   function ccmAbort(m: string | null, f: string | null, l: u32, c: u32): void { ccm.abort(m, f, l, c); }
//
// Strings are UTF-16 inside AssemblyScript and UTF-8 on the wire; file
// contents are bytes (Uint8Array), decode them with String.UTF8.decode.

import { Host } from "@extism/as-pdk";
import {
  alloc,
  error_set,
  free,
  length,
  load_u64,
  load_u8,
  store_u64,
  store_u8,
} from "@extism/as-pdk/lib/env";

// ---- JSON ------------------------------------------------------------------

export const enum Kind {
  Missing,
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

// Json is one decoded JSON value. A member or item that is not there is a
// Json of kind Missing, so lookups chain without null checks:
// req.get("properties").get("path").str().
export class Json {
  kind: Kind = Kind.Missing;
  b: bool = false;
  text: string = ""; // a string's value, or a number's text as written
  items: Array<Json> = [];
  keys: Array<string> = [];

  // get returns the member name of an object (the first one when repeated).
  get(name: string): Json {
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keys[i] == name) return this.items[i];
    }
    return new Json();
  }

  isString(): bool {
    return this.kind == Kind.String;
  }

  // str is a string's value, or "" for anything else.
  str(): string {
    return this.kind == Kind.String ? this.text : "";
  }

  // bool is true only for true.
  bool(): bool {
    return this.kind == Kind.Bool && this.b;
  }

  // scalar is the text of a string, number or boolean as a manifest author
  // wrote it ("8080", "8080" for 8080, "true"); null for anything else.
  scalar(): string | null {
    if (this.kind == Kind.String || this.kind == Kind.Number) return this.text;
    if (this.kind == Kind.Bool) return this.b ? "true" : "false";
    return null;
  }
}

class Parser {
  i: i32 = 0;
  ok: bool = true;
  depth: i32 = 0;
  constructor(public s: string) {}

  ws(): void {
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.i++;
    }
  }

  peek(): i32 {
    return this.i < this.s.length ? this.s.charCodeAt(this.i) : -1;
  }

  value(): Json {
    const v = new Json();
    this.ws();
    const c = this.peek();
    if (++this.depth > 256) {
      this.ok = false;
      return v;
    }
    if (c == 0x7b /* { */) {
      v.kind = Kind.Object;
      this.i++;
      this.ws();
      if (this.peek() == 0x7d) {
        this.i++;
      } else {
        while (this.ok) {
          this.ws();
          if (this.peek() != 0x22) {
            this.ok = false;
            break;
          }
          v.keys.push(this.string());
          this.ws();
          if (this.peek() != 0x3a /* : */) {
            this.ok = false;
            break;
          }
          this.i++;
          v.items.push(this.value());
          this.ws();
          const d = this.peek();
          this.i++;
          if (d == 0x7d) break;
          if (d != 0x2c) this.ok = false;
        }
      }
    } else if (c == 0x5b /* [ */) {
      v.kind = Kind.Array;
      this.i++;
      this.ws();
      if (this.peek() == 0x5d) {
        this.i++;
      } else {
        while (this.ok) {
          v.items.push(this.value());
          this.ws();
          const d = this.peek();
          this.i++;
          if (d == 0x5d) break;
          if (d != 0x2c) this.ok = false;
        }
      }
    } else if (c == 0x22) {
      v.kind = Kind.String;
      v.text = this.string();
    } else if (this.word("true")) {
      v.kind = Kind.Bool;
      v.b = true;
    } else if (this.word("false")) {
      v.kind = Kind.Bool;
    } else if (this.word("null")) {
      v.kind = Kind.Null;
    } else {
      const start = this.i;
      while (this.i < this.s.length) {
        const d = this.s.charCodeAt(this.i);
        if (!((d >= 0x30 && d <= 0x39) || d == 0x2d || d == 0x2b || d == 0x2e || d == 0x65 || d == 0x45)) break;
        this.i++;
      }
      if (this.i == start) this.ok = false;
      v.kind = Kind.Number;
      v.text = this.s.substring(start, this.i);
    }
    this.depth--;
    return v;
  }

  word(w: string): bool {
    if (this.s.substr(this.i, w.length) != w) return false;
    this.i += w.length;
    return true;
  }

  string(): string {
    this.i++; // the opening quote
    let out = "";
    let start = this.i;
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c == 0x22) {
        out += this.s.substring(start, this.i);
        this.i++;
        return out;
      }
      if (c != 0x5c) {
        this.i++;
        continue;
      }
      out += this.s.substring(start, this.i);
      const e = this.s.charCodeAt(this.i + 1);
      this.i += 2;
      if (e == 0x6e) out += "\n";
      else if (e == 0x74) out += "\t";
      else if (e == 0x72) out += "\r";
      else if (e == 0x62) out += "\b";
      else if (e == 0x66) out += "\f";
      else if (e == 0x75) {
        const hex = this.s.substr(this.i, 4);
        const code = I32.parseInt(hex, 16);
        out += String.fromCharCode(code);
        this.i += 4;
      } else out += String.fromCharCode(e); // \" \\ \/
      start = this.i;
    }
    this.ok = false;
    return out;
  }
}

// parse decodes one JSON document; kind Missing when it is not well formed.
export function parse(s: string): Json {
  const p = new Parser(s);
  const v = p.value();
  p.ws();
  if (!p.ok || p.i != s.length) return new Json();
  return v;
}

// quote returns s as a quoted JSON string.
export function quote(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc = "";
    if (c == 0x22) esc = '\\"';
    else if (c == 0x5c) esc = "\\\\";
    else if (c == 0x0a) esc = "\\n";
    else if (c == 0x0d) esc = "\\r";
    else if (c == 0x09) esc = "\\t";
    else if (c < 0x20) esc = "\\u00" + (c < 0x10 ? "0" : "") + c.toString(16);
    else continue;
    out += s.substring(start, i) + esc;
    start = i + 1;
  }
  return out + s.substring(start) + '"';
}

// ---- base64 (byte fields: ccm_fs_read and ccm_fs_write content) -------------

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

export function base64Encode(b: Uint8Array): string {
  const parts = new Array<string>();
  let i = 0;
  for (; i + 3 <= b.length; i += 3) {
    const v = (u32(b[i]) << 16) | (u32(b[i + 1]) << 8) | u32(b[i + 2]);
    parts.push(B64.charAt(v >> 18) + B64.charAt((v >> 12) & 63) + B64.charAt((v >> 6) & 63) + B64.charAt(v & 63));
  }
  const rest = b.length - i;
  if (rest == 1) {
    const v = u32(b[i]) << 16;
    parts.push(B64.charAt(v >> 18) + B64.charAt((v >> 12) & 63) + "==");
  } else if (rest == 2) {
    const v = (u32(b[i]) << 16) | (u32(b[i + 1]) << 8);
    parts.push(B64.charAt(v >> 18) + B64.charAt((v >> 12) & 63) + B64.charAt((v >> 6) & 63) + "=");
  }
  return parts.join("");
}

export function base64Decode(s: string): Uint8Array {
  const out = new Uint8Array((s.length / 4) * 3 + 3);
  let n = 0;
  let acc: u32 = 0;
  let bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let d: i32 = -1;
    if (c >= 0x41 && c <= 0x5a) d = c - 0x41;
    else if (c >= 0x61 && c <= 0x7a) d = c - 0x61 + 26;
    else if (c >= 0x30 && c <= 0x39) d = c - 0x30 + 52;
    else if (c == 0x2b) d = 62;
    else if (c == 0x2f) d = 63;
    if (d < 0) break; // '=' or garbage ends the data
    acc = (acc << 6) | u32(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = u8(acc >> bits);
    }
  }
  return out.slice(0, n);
}

// ---- kernel blocks -------------------------------------------------------------

function put(data: Uint8Array): u64 {
  const off = alloc(data.length);
  let i = 0;
  for (; i + 8 <= data.length; i += 8) store_u64(off + i, load<u64>(data.dataStart + i));
  for (; i < data.length; i++) store_u8(off + i, data[i]);
  return off;
}

function get(off: u64): Uint8Array {
  const n = i32(length(off));
  const out = new Uint8Array(n);
  let i = 0;
  for (; i + 8 <= n; i += 8) store<u64>(out.dataStart + i, load_u64(off + i));
  for (; i < n; i++) out[i] = load_u8(off + i);
  return out;
}

// ---- exports -------------------------------------------------------------------

// input returns the export's input document, decoded.
export function input(): Json {
  return parse(String.UTF8.decode(Host.input().buffer));
}

// output sets the export's output document; returns 0 for the export to return.
export function output(doc: string): i32 {
  Host.output(Uint8Array.wrap(String.UTF8.encode(doc)));
  return 0;
}

// fail fails the export call itself (a resource failure is the "error" field
// of the output instead); returns 1 for the export to return.
export function fail(message: string): i32 {
  error_set(put(Uint8Array.wrap(String.UTF8.encode(message))));
  return 1;
}

// abort is the body of the module's abort function (see the top of the
// file): it reports the message as the call's error and traps.
export function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  let m = "abort";
  if (message !== null) m += ": " + message;
  if (file !== null) m += " at " + file + ":" + line.toString() + ":" + column.toString();
  fail(m);
  unreachable();
}

// ---- host calls ------------------------------------------------------------------

@external("extism:host/user", "ccm_fs_stat")
declare function ccm_fs_stat(req: u64): u64;
@external("extism:host/user", "ccm_fs_read")
declare function ccm_fs_read(req: u64): u64;
@external("extism:host/user", "ccm_fs_write")
declare function ccm_fs_write(req: u64): u64;
@external("extism:host/user", "ccm_fs_mkdir")
declare function ccm_fs_mkdir(req: u64): u64;
@external("extism:host/user", "ccm_fs_remove")
declare function ccm_fs_remove(req: u64): u64;
@external("extism:host/user", "ccm_fs_list")
declare function ccm_fs_list(req: u64): u64;
@external("extism:host/user", "ccm_lookup")
declare function ccm_lookup(req: u64): u64;
@external("extism:host/user", "ccm_log")
declare function ccm_log(req: u64): u64;

// Reply is a host call's answer: ok and its document in value, or the error's
// code ("denied", "not_found", ... see sdk/abi) and message.
export class Reply {
  ok: bool = false;
  value: Json = new Json();
  code: string = "";
  message: string = "";

  // err is "code: message", for a resource's error text.
  err(): string {
    return this.code + ": " + this.message;
  }
}

// call makes the host call name (one of the ccm_* above; others are in
// sdk/abi and can be declared the same way) with a JSON request.
export function call(name: string, request: string): Reply {
  const req = put(Uint8Array.wrap(String.UTF8.encode(request)));
  let off: u64 = 0;
  if (name == "ccm_fs_stat") off = ccm_fs_stat(req);
  else if (name == "ccm_fs_read") off = ccm_fs_read(req);
  else if (name == "ccm_fs_write") off = ccm_fs_write(req);
  else if (name == "ccm_fs_mkdir") off = ccm_fs_mkdir(req);
  else if (name == "ccm_fs_remove") off = ccm_fs_remove(req);
  else if (name == "ccm_fs_list") off = ccm_fs_list(req);
  else if (name == "ccm_lookup") off = ccm_lookup(req);
  else if (name == "ccm_log") off = ccm_log(req);
  free(req);
  const r = new Reply();
  if (off == 0) {
    r.code = "io";
    r.message = name + ": no reply from the host";
    return r;
  }
  const doc = parse(String.UTF8.decode(get(off).buffer));
  free(off);
  const ok = doc.get("ok");
  if (ok.kind != Kind.Missing) {
    r.ok = true;
    r.value = ok;
    return r;
  }
  const e = doc.get("error");
  r.code = e.get("code").str();
  r.message = e.get("message").str();
  if (r.code == "") {
    r.code = "io";
    r.message = name + ": malformed reply from the host";
  }
  return r;
}

// fsStat asks for the state of path: exists, type, mode, uid, gid, size,
// sha256 (when checksum), ...
export function fsStat(path: string, followSymlinks: bool = false, checksum: bool = false): Reply {
  return call(
    "ccm_fs_stat",
    '{"path":' + quote(path) + ',"follow_symlinks":' + (followSymlinks ? "true" : "false") +
      ',"checksum":' + (checksum ? "true" : "false") + "}",
  );
}

// fsRead reads a file; on success value.get("content") holds base64, see
// readContent.
export function fsRead(path: string): Reply {
  return call("ccm_fs_read", '{"path":' + quote(path) + "}");
}

// readContent decodes the content of a successful fsRead reply.
export function readContent(r: Reply): Uint8Array {
  return base64Decode(r.value.get("content").str());
}

// fsWrite writes content over path atomically with the given permission
// bits; owner and group ("" = leave as created) are names or numeric ids.
export function fsWrite(path: string, content: Uint8Array, mode: u32, owner: string = "", group: string = ""): Reply {
  let req = '{"path":' + quote(path) + ',"content":"' + base64Encode(content) + '","mode":' + mode.toString();
  if (owner != "") req += ',"owner":' + quote(owner);
  if (group != "") req += ',"group":' + quote(group);
  return call("ccm_fs_write", req + "}");
}

// log writes a line to the host log, attributed to the resource.
export function log(level: string, message: string): void {
  call("ccm_log", '{"level":' + quote(level) + ',"message":' + quote(message) + "}");
}
