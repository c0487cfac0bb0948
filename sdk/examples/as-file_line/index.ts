// file_line: a ccm resource type written in AssemblyScript. It ensures that
// a line is present in (or absent from) a text file, leaving the other
// lines as they were.
//
//   - file_line:
//       - motd-notice:
//           path: /opt/vendor/motd
//           line: "Managed by ccm"
//           match: "Managed by"    # optional: replace the first line starting with this
//
// Build (scripts/build-examples.sh does exactly this):
//
//   npm ci
//   npx asc index.ts --path node_modules --outFile file_line.wasm \
//     --use abort=index/ccmAbort --optimize --shrinkLevel 2 --noAssert
//
// It reads with ccm_fs_stat and ccm_fs_read and writes with ccm_fs_write
// (atomic, keeping the file's mode and owner). Files are taken as UTF-8
// text.

import * as ccm from "../../assemblyscript/ccm";

function ccmAbort(message: string | null, file: string | null, line: u32, column: u32): void {
  ccm.abort(message, file, line, column);
}

const TYPE = "file_line";

export function ccm_describe(): i32 {
  return ccm.output(
    '{"abi":1,"type":"' + TYPE + '","version":"0.1.0","providers":["posix"],' +
      '"ensure":["present","absent"],"default_ensure":"present","refresh":false,' +
      '"properties_schema":{"type":"object","required":["path","line"],"properties":{' +
      '"path":{"type":"string","description":"absolute path of the file"},' +
      '"line":{"type":"string","description":"the whole line, without its line break"},' +
      '"match":{"type":"string","description":"with ensure present: replace the first line starting with this"}}},' +
      '"capabilities":{"fs_read":["/**"],"fs_write":["/**"]}}',
  );
}

class Spec {
  path: string = "";
  line: string = "";
  match: string = "";
  present: bool = true;
  errors: Array<string> = [];
}

function parse(props: ccm.Json): Spec {
  const s = new Spec();
  s.path = props.get("path").str();
  s.line = props.get("line").str();
  s.match = props.get("match").str();
  const ensure = props.get("ensure");
  s.present = !ensure.isString() || ensure.str() == "present";
  if (!s.path.startsWith("/")) s.errors.push("path: must be an absolute path such as /etc/motd");
  if (!props.get("line").isString()) s.errors.push("line: required, a string");
  if (s.line.includes("\n") || s.line.includes("\r")) s.errors.push("line: must not contain a line break");
  if (ensure.isString() && ensure.str() != "present" && ensure.str() != "absent")
    s.errors.push("ensure: must be present or absent");
  return s;
}

export function ccm_validate(): i32 {
  const req = ccm.input();
  if (req.kind == ccm.Kind.Missing) return ccm.fail(TYPE + ": ccm_validate input is not a JSON document");
  const s = parse(req.get("properties"));
  const quoted = new Array<string>();
  for (let i = 0; i < s.errors.length; i++) quoted.push(ccm.quote(s.errors[i]));
  return ccm.output('{"errors":[' + quoted.join(",") + "]}");
}

// File is what the plugin knows of the target file.
class File {
  exists: bool = false;
  mode: u32 = 0o644;
  uid: string = "";
  gid: string = "";
  text: string = "";
  error: string = "";
}

function readFile(path: string): File {
  const f = new File();
  const st = ccm.fsStat(path);
  if (!st.ok) {
    f.error = "read " + path + ": " + st.err();
    return f;
  }
  f.exists = st.value.get("exists").bool();
  if (!f.exists) return f;
  if (st.value.get("type").str() != "file") {
    f.error = path + " is not a regular file (a symlink is not followed: point path at the file)";
    return f;
  }
  const mode = st.value.get("mode"); // absent when 0
  f.mode = mode.kind == ccm.Kind.Number ? u32(I32.parseInt(mode.text)) : 0;
  f.uid = st.value.get("uid").text;
  f.gid = st.value.get("gid").text;
  const r = ccm.fsRead(path);
  if (!r.ok) {
    f.error = "read " + path + ": " + r.err();
    return f;
  }
  f.text = String.UTF8.decode(ccm.readContent(r).buffer);
  return f;
}

// desired returns the text the file should have.
function desired(text: string, s: Spec): string {
  const lines = text.split("\n");
  const trailing = text.endsWith("\n");
  if (trailing) lines.pop(); // split leaves "" after the last line break
  if (text == "") lines.length = 0;
  const out = new Array<string>();
  if (s.present) {
    if (lines.includes(s.line)) return text;
    let replaced = false;
    for (let i = 0; i < lines.length; i++) {
      if (!replaced && s.match != "" && lines[i].startsWith(s.match)) {
        out.push(s.line);
        replaced = true;
      } else {
        out.push(lines[i]);
      }
    }
    if (!replaced) out.push(s.line);
    return out.join("\n") + "\n";
  }
  for (let i = 0; i < lines.length; i++) if (lines[i] != s.line) out.push(lines[i]);
  if (out.length == lines.length) return text;
  return out.length ? out.join("\n") + (trailing ? "\n" : "") : "";
}

function hasLine(text: string, line: string): bool {
  const lines = text.split("\n");
  return lines.includes(line);
}

function state(s: Spec, present: bool): string {
  return '{"path":' + ccm.quote(s.path) + ',"line":' + ccm.quote(s.line) + ',"present":' + (present ? "true" : "false") + "}";
}

function resourceError(message: string): i32 {
  return ccm.output('{"error":' + ccm.quote(message) + ',"state":{}}');
}

export function ccm_status(): i32 {
  const req = ccm.input();
  if (req.kind == ccm.Kind.Missing) return ccm.fail(TYPE + ": ccm_status input is not a JSON document");
  const s = parse(req.get("properties"));
  if (s.errors.length) return resourceError("invalid properties: " + s.errors.join("; "));
  const f = readFile(s.path);
  if (f.error != "") return resourceError(f.error);
  const present = hasLine(f.text, s.line);
  return ccm.output(
    '{"provider":"posix","final_ensure":' + (present ? '"present"' : '"absent"') + ',"state":' + state(s, present) + "}",
  );
}

export function ccm_apply(): i32 {
  const req = ccm.input();
  if (req.kind == ccm.Kind.Missing) return ccm.fail(TYPE + ": ccm_apply input is not a JSON document");
  const s = parse(req.get("properties"));
  if (s.errors.length) return resourceError("invalid properties: " + s.errors.join("; "));
  if (req.get("health_check_only").bool()) return ccm.output('{"changed":false}');

  const f = readFile(s.path);
  if (f.error != "") return resourceError(f.error);
  const want = desired(f.text, s);
  let present = hasLine(f.text, s.line);
  if (want == f.text) {
    return ccm.output(
      '{"provider":"posix","changed":false,"final_ensure":' + (present ? '"present"' : '"absent"') +
        ',"state":' + state(s, present) + "}",
    );
  }
  const what = (s.present ? "add " : "remove ") + ccm.quote(s.line) + (s.present ? " to " : " from ") + s.path;
  if (req.get("noop").bool()) {
    return ccm.output(
      '{"provider":"posix","changed":true,"noop_message":' + ccm.quote("Would " + what) +
        ',"final_ensure":' + (present ? '"present"' : '"absent"') + ',"state":' + state(s, present) + "}",
    );
  }
  const w = ccm.fsWrite(s.path, Uint8Array.wrap(String.UTF8.encode(want)), f.exists ? f.mode : 0o644, f.uid, f.gid);
  if (!w.ok) return resourceError("write " + s.path + ": " + w.err());

  // Converged? Read it back.
  const again = readFile(s.path);
  if (again.error != "") return resourceError(again.error);
  if (desired(again.text, s) != again.text) {
    return resourceError("failed to reach desired state: " + s.path + " still differs after the write");
  }
  present = hasLine(again.text, s.line);
  return ccm.output(
    '{"provider":"posix","changed":true,"messages":[' + ccm.quote(what) + '],"final_ensure":' +
      (present ? '"present"' : '"absent"') + ',"state":' + state(s, present) + "}",
  );
}
