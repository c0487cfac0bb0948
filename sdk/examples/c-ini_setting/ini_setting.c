/*
 * ini_setting: a ccm resource type written in C. It ensures that one
 * "setting = value" line is present in (or absent from) a section of an
 * INI-style file, leaving every other line as it was.
 *
 *   - ini_setting:
 *       - sshd-port:
 *           path: /opt/vendor/app.ini
 *           section: server        # optional; "" = before the first section
 *           setting: port
 *           value: "8080"
 *
 * Build (scripts/build-examples.sh does exactly this):
 *
 *   clang-14 --target=wasm32-wasi --sysroot=/usr -Oz -mexec-model=reactor \
 *     -fuse-ld=lld -Wl,--strip-all -I sdk/c \
 *     -o ini_setting.wasm sdk/examples/c-ini_setting/ini_setting.c
 *
 * It reads the file with ccm_fs_stat and ccm_fs_read and writes it with
 * ccm_fs_write (atomic, keeping the file's mode and owner), asks for
 * fs_read and fs_write on every path and so gets whatever the scope grants.
 */
#include "ccm.h"

#define TYPE "ini_setting"

CCM_EXPORT(ccm_describe) int32_t describe(void) {
    static const char info[] =
        "{\"abi\":1,\"type\":\"" TYPE "\",\"version\":\"0.1.0\",\"providers\":[\"posix\"],"
        "\"ensure\":[\"present\",\"absent\"],\"default_ensure\":\"present\",\"refresh\":false,"
        "\"properties_schema\":{\"type\":\"object\",\"required\":[\"path\",\"setting\"],\"properties\":{"
        "\"path\":{\"type\":\"string\",\"description\":\"absolute path of the INI file\"},"
        "\"section\":{\"type\":\"string\",\"description\":\"section name; empty = before the first section\"},"
        "\"setting\":{\"type\":\"string\",\"minLength\":1},"
        "\"value\":{\"type\":[\"string\",\"number\",\"boolean\"]}}},"
        "\"capabilities\":{\"fs_read\":[\"/**\"],\"fs_write\":[\"/**\"]}}";
    return ccm_output(info, sizeof info - 1);
}

/* spec holds the decoded properties. value is the text to write: a string
 * as it is, a number or boolean as written in the manifest. */
typedef struct {
    char *path, *section, *setting, *value, *ensure;
} spec;

static char *dup_json_text(ccm_json v) {
    char *s = ccm_json_string(v, NULL);
    if (s || !v.p) return s;
    if (ccm_json_kind(v) == '{' || ccm_json_kind(v) == '[' || ccm_json_kind(v) == 'n') return NULL;
    s = (char *)malloc(v.n + 1);
    memcpy(s, v.p, v.n);
    s[v.n] = 0;
    return s;
}

static int has_any(const char *s, const char *chars) {
    for (; s && *s; s++)
        if (strchr(chars, *s)) return 1;
    return 0;
}

/* parse decodes props into sp and writes each problem, as a JSON string
 * followed by a comma, into errs. */
static void parse(ccm_json props, spec *sp, ccm_buf *errs) {
    sp->path = ccm_json_string(ccm_json_get(props, "path"), NULL);
    sp->section = ccm_json_string(ccm_json_get(props, "section"), NULL);
    sp->setting = ccm_json_string(ccm_json_get(props, "setting"), NULL);
    sp->value = dup_json_text(ccm_json_get(props, "value"));
    sp->ensure = ccm_json_string(ccm_json_get(props, "ensure"), NULL);
    if (!sp->section) sp->section = strdup("");
    if (!sp->ensure) sp->ensure = strdup("present");

#define PROBLEM(msg)                            \
    do {                                        \
        ccm_buf_put_cstring(errs, msg);         \
        ccm_buf_putc(errs, ',');                \
    } while (0)
    if (!sp->path || sp->path[0] != '/')
        PROBLEM("path: must be an absolute path such as /etc/app.ini");
    if (!sp->setting || !sp->setting[0] || has_any(sp->setting, "=\n\r[]") || strchr(";#", sp->setting[0]))
        PROBLEM("setting: must be a non-empty name without =, [, ], a line break or a leading ; or #");
    if (has_any(sp->section, "[]\n\r"))
        PROBLEM("section: must not contain [, ] or a line break");
    if (strcmp(sp->ensure, "present") == 0) {
        if (!sp->value) PROBLEM("value: required with ensure present (a string, number or boolean)");
        else if (has_any(sp->value, "\n\r")) PROBLEM("value: must not contain a line break");
    } else if (strcmp(sp->ensure, "absent") != 0) {
        PROBLEM("ensure: must be present or absent");
    }
#undef PROBLEM
}

CCM_EXPORT(ccm_validate) int32_t validate(void) {
    size_t n;
    char *in = ccm_input(&n);
    ccm_json req = ccm_json_parse(in, n);
    if (!req.p) return ccm_fail(TYPE ": ccm_validate input is not a JSON document");
    spec sp;
    ccm_buf errs = {0}, out = {0};
    parse(ccm_json_get(req, "properties"), &sp, &errs);
    if (errs.len) errs.len--; /* the last comma */
    ccm_buf_puts(&out, "{\"errors\":[");
    ccm_buf_put(&out, errs.data, errs.len);
    ccm_buf_puts(&out, "]}");
    ccm_buf_free(&errs);
    free(sp.path), free(sp.section), free(sp.setting), free(sp.value), free(sp.ensure);
    free(in);
    return ccm_output_buf(&out);
}

/* ---- the INI edit -------------------------------------------------------- */

typedef struct {
    const char *p;
    size_t n;
} span;

static span trim(span s) {
    while (s.n && (s.p[0] == ' ' || s.p[0] == '\t')) s.p++, s.n--;
    while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t' || s.p[s.n - 1] == '\r')) s.n--;
    return s;
}

static int span_is(span s, const char *c) { return s.n == strlen(c) && memcmp(s.p, c, s.n) == 0; }

/* found describes the setting's line in the current text. */
typedef struct {
    int exists;         /* the setting's line is there */
    span value;         /* its current value */
    size_t line_start;  /* byte offsets of that line, newline included */
    size_t line_end;
    int section_exists; /* the section's header is there (always for "") */
    size_t insert_at;   /* where a new line goes: after the section's last non-blank line */
} found;

/* find scans text for sp's setting. A line "[name]" starts a section;
 * "key = value" (spaces optional) is a setting; lines starting with ; or #
 * are comments. Only the first occurrence counts. */
static found find(const char *text, size_t n, const spec *sp) {
    found f = {0};
    int in_section = sp->section[0] == 0;
    f.section_exists = in_section;
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && text[i] != '\n') i++;
        size_t end = i < n ? i + 1 : i;
        span line = trim((span){text + start, i - start});
        i = end;
        if (line.n && line.p[0] == '[') {
            const char *close = memchr(line.p, ']', line.n);
            if (close) {
                span name = trim((span){line.p + 1, (size_t)(close - line.p - 1)});
                in_section = sp->section[0] && span_is(name, sp->section);
                if (in_section) {
                    f.section_exists = 1;
                    f.insert_at = end;
                }
                continue;
            }
        }
        if (!in_section || !line.n) continue;
        f.insert_at = end;
        if (line.p[0] == ';' || line.p[0] == '#') continue;
        const char *eq = memchr(line.p, '=', line.n);
        if (!eq || f.exists) continue;
        span key = trim((span){line.p, (size_t)(eq - line.p)});
        if (!span_is(key, sp->setting)) continue;
        f.exists = 1;
        f.value = trim((span){eq + 1, line.n - (size_t)(eq + 1 - line.p)});
        f.line_start = start;
        f.line_end = end;
    }
    return f;
}

/* edit writes the desired text into out and returns whether it differs. */
static int edit(const char *text, size_t n, const spec *sp, const found *f, ccm_buf *out) {
    int present = strcmp(sp->ensure, "present") == 0;
    ccm_buf line = {0};
    if (present) {
        ccm_buf_puts(&line, sp->setting);
        ccm_buf_puts(&line, " = ");
        ccm_buf_puts(&line, sp->value);
        ccm_buf_putc(&line, '\n');
    }
    int changed = 1;
    if (present && f->exists && span_is(f->value, sp->value)) {
        changed = 0;
    } else if (present && f->exists) {
        ccm_buf_put(out, text, f->line_start);
        ccm_buf_put(out, line.data, line.len);
        ccm_buf_put(out, text + f->line_end, n - f->line_end);
    } else if (present && f->section_exists) {
        ccm_buf_put(out, text, f->insert_at);
        if (f->insert_at && text[f->insert_at - 1] != '\n') ccm_buf_putc(out, '\n');
        ccm_buf_put(out, line.data, line.len);
        ccm_buf_put(out, text + f->insert_at, n - f->insert_at);
    } else if (present) {
        ccm_buf_put(out, text, n);
        if (n && text[n - 1] != '\n') ccm_buf_putc(out, '\n');
        if (n) ccm_buf_putc(out, '\n');
        ccm_buf_putc(out, '[');
        ccm_buf_puts(out, sp->section);
        ccm_buf_puts(out, "]\n");
        ccm_buf_put(out, line.data, line.len);
    } else if (f->exists) {
        ccm_buf_put(out, text, f->line_start);
        ccm_buf_put(out, text + f->line_end, n - f->line_end);
    } else {
        changed = 0;
    }
    ccm_buf_free(&line);
    return changed;
}

/* ---- host calls ----------------------------------------------------------- */

/* file is what the plugin knows of the INI file. */
typedef struct {
    int exists;
    uint64_t mode, uid, gid;
    unsigned char *text;
    size_t n;
} file;

/* read_file fills fl; on failure it returns a message to report (malloc'ed). */
static char *read_file(const char *path, file *fl) {
    memset(fl, 0, sizeof *fl);
    ccm_buf q = {0}, msg = {0};
    ccm_buf_puts(&q, "{\"path\":");
    ccm_buf_put_cstring(&q, path);
    ccm_buf_putc(&q, '}');
    ccm_reply r = ccm_call(ccm_host_fs_stat, &q); /* {"path": ...} serves both calls */
    if (!r.ok) goto fail;
    fl->exists = ccm_json_bool(ccm_json_get(r.value, "exists"));
    if (!fl->exists) {
        ccm_reply_free(&r);
        ccm_buf_free(&q);
        fl->text = (unsigned char *)strdup("");
        return NULL;
    }
    char *type = ccm_json_string(ccm_json_get(r.value, "type"), NULL);
    int regular = type && strcmp(type, "file") == 0;
    free(type);
    if (!regular) {
        ccm_buf_puts(&msg, path);
        ccm_buf_puts(&msg, " is not a regular file (a symlink is not followed: point path at the file)");
        ccm_reply_free(&r);
        ccm_buf_free(&q);
        return msg.data;
    }
    fl->mode = ccm_json_uint(ccm_json_get(r.value, "mode"), 0); /* absent = 0 */
    fl->uid = ccm_json_uint(ccm_json_get(r.value, "uid"), 0);
    fl->gid = ccm_json_uint(ccm_json_get(r.value, "gid"), 0);
    ccm_reply_free(&r);
    r = ccm_call(ccm_host_fs_read, &q);
    if (!r.ok) goto fail;
    fl->text = ccm_json_base64(ccm_json_get(r.value, "content"), &fl->n);
    if (!fl->text) fl->text = (unsigned char *)strdup(""), fl->n = 0;
    ccm_reply_free(&r);
    ccm_buf_free(&q);
    return NULL;
fail:
    ccm_buf_puts(&msg, "read ");
    ccm_buf_puts(&msg, path);
    ccm_buf_puts(&msg, ": ");
    ccm_buf_puts(&msg, r.code);
    ccm_buf_puts(&msg, ": ");
    ccm_buf_puts(&msg, r.message);
    ccm_reply_free(&r);
    ccm_buf_free(&q);
    return msg.data;
}

/* write_file writes text over path, keeping an existing file's mode and
 * owner; NULL on success, else a message. */
static char *write_file(const char *path, const file *fl, const char *text, size_t n) {
    ccm_buf q = {0}, msg = {0};
    ccm_buf_puts(&q, "{\"path\":");
    ccm_buf_put_cstring(&q, path);
    ccm_buf_puts(&q, ",\"content\":");
    ccm_buf_put_base64(&q, text, n);
    ccm_buf_puts(&q, ",\"mode\":");
    ccm_buf_put_uint(&q, fl->exists ? fl->mode : 0644);
    if (fl->exists) {
        ccm_buf_puts(&q, ",\"owner\":\"");
        ccm_buf_put_uint(&q, fl->uid);
        ccm_buf_puts(&q, "\",\"group\":\"");
        ccm_buf_put_uint(&q, fl->gid);
        ccm_buf_putc(&q, '"');
    }
    ccm_buf_putc(&q, '}');
    ccm_reply r = ccm_call(ccm_host_fs_write, &q);
    ccm_buf_free(&q);
    if (r.ok) {
        ccm_reply_free(&r);
        return NULL;
    }
    ccm_buf_puts(&msg, "write ");
    ccm_buf_puts(&msg, path);
    ccm_buf_puts(&msg, ": ");
    ccm_buf_puts(&msg, r.code);
    ccm_buf_puts(&msg, ": ");
    ccm_buf_puts(&msg, r.message);
    ccm_reply_free(&r);
    return msg.data;
}

/* ---- status and apply ----------------------------------------------------- */

/* put_state writes the observed state object. */
static void put_state(ccm_buf *out, const spec *sp, const found *f) {
    ccm_buf_puts(out, "{\"path\":");
    ccm_buf_put_cstring(out, sp->path);
    ccm_buf_puts(out, ",\"section\":");
    ccm_buf_put_cstring(out, sp->section);
    ccm_buf_puts(out, ",\"setting\":");
    ccm_buf_put_cstring(out, sp->setting);
    ccm_buf_puts(out, ",\"value\":");
    if (f && f->exists) ccm_buf_put_string(out, f->value.p, f->value.n);
    else ccm_buf_puts(out, "null");
    ccm_buf_putc(out, '}');
}

/* result_error outputs a Result (or StatusResponse) that failed. */
static int32_t result_error(const char *message) {
    ccm_buf out = {0};
    ccm_buf_puts(&out, "{\"error\":");
    ccm_buf_put_cstring(&out, message);
    ccm_buf_puts(&out, ",\"state\":{}}");
    return ccm_output_buf(&out);
}

/* call holds what one ccm_status or ccm_apply call allocates: the host
 * keeps one instance for a whole run, so each call frees what it took. */
typedef struct {
    char *in;   /* the input document; req points into it */
    ccm_json req;
    spec sp;
    file fl, again;
    ccm_buf want, what, out;
    char *err; /* a message to report, or NULL */
} call;

static void call_free(call *c) {
    free(c->in);
    free(c->sp.path), free(c->sp.section), free(c->sp.setting), free(c->sp.value), free(c->sp.ensure);
    free(c->fl.text), free(c->again.text);
    ccm_buf_free(&c->want), ccm_buf_free(&c->what), ccm_buf_free(&c->out);
    free(c->err);
}

/* load decodes the request into c; 0 when it is usable. Otherwise it has
 * set the output (or failed the call) and returns what the export returns
 * plus one. */
static int load(call *c, const char *export) {
    size_t n;
    c->in = ccm_input(&n);
    c->req = ccm_json_parse(c->in, n);
    if (!c->req.p) {
        ccm_buf m = {0};
        ccm_buf_puts(&m, TYPE ": ");
        ccm_buf_puts(&m, export);
        ccm_buf_puts(&m, " input is not a JSON document");
        int32_t rc = ccm_fail(m.data);
        ccm_buf_free(&m);
        return rc + 1;
    }
    ccm_buf errs = {0};
    parse(ccm_json_get(c->req, "properties"), &c->sp, &errs);
    if (!errs.len) return 0;
    errs.data[--errs.len] = 0; /* the last comma */
    ccm_buf m = {0};
    ccm_buf_puts(&m, "invalid properties: ");
    ccm_buf_put(&m, errs.data, errs.len); /* quoted JSON strings: good enough in a message */
    ccm_buf_free(&errs);
    c->err = m.data;
    return result_error(c->err) + 1;
}

static int32_t do_status(call *c) {
    int rc = load(c, "ccm_status");
    if (rc) return rc - 1;
    if ((c->err = read_file(c->sp.path, &c->fl))) return result_error(c->err);
    found f = find((char *)c->fl.text, c->fl.n, &c->sp);
    ccm_buf_puts(&c->out, "{\"provider\":\"posix\",\"final_ensure\":");
    ccm_buf_puts(&c->out, f.exists ? "\"present\"" : "\"absent\"");
    ccm_buf_puts(&c->out, ",\"state\":");
    put_state(&c->out, &c->sp, &f);
    ccm_buf_putc(&c->out, '}');
    return ccm_output(c->out.data, c->out.len);
}

static int32_t do_apply(call *c) {
    int rc = load(c, "ccm_apply");
    if (rc) return rc - 1;
    if (ccm_json_bool(ccm_json_get(c->req, "health_check_only"))) return ccm_output("{\"changed\":false}", 17);
    spec *sp = &c->sp;
    if ((c->err = read_file(sp->path, &c->fl))) return result_error(c->err);
    found f = find((char *)c->fl.text, c->fl.n, sp);
    int changed = edit((char *)c->fl.text, c->fl.n, sp, &f, &c->want);

    /* what: "set [server] port = 8080 in /etc/app.ini" */
    ccm_buf *what = &c->what;
    if (strcmp(sp->ensure, "present") == 0) {
        ccm_buf_puts(what, "set ");
        if (sp->section[0]) {
            ccm_buf_putc(what, '[');
            ccm_buf_puts(what, sp->section);
            ccm_buf_puts(what, "] ");
        }
        ccm_buf_puts(what, sp->setting);
        ccm_buf_puts(what, " = ");
        ccm_buf_puts(what, sp->value);
    } else {
        ccm_buf_puts(what, "remove ");
        ccm_buf_puts(what, sp->setting);
    }
    ccm_buf_puts(what, " in ");
    ccm_buf_puts(what, sp->path);

    ccm_buf *out = &c->out;
    ccm_buf_puts(out, "{\"provider\":\"posix\",\"changed\":");
    ccm_buf_puts(out, changed ? "true" : "false");
    if (changed && ccm_json_bool(ccm_json_get(c->req, "noop"))) {
        ccm_buf m = {0};
        ccm_buf_puts(&m, "Would have ");
        ccm_buf_put(&m, what->data, what->len);
        ccm_buf_puts(out, ",\"noop_message\":");
        ccm_buf_put_string(out, m.data, m.len);
        ccm_buf_free(&m);
    } else if (changed) {
        if ((c->err = write_file(sp->path, &c->fl, c->want.data ? c->want.data : "", c->want.len)))
            return result_error(c->err);
        /* Converged? Read it back and look again. */
        if ((c->err = read_file(sp->path, &c->again))) return result_error(c->err);
        found g = find((char *)c->again.text, c->again.n, sp);
        ccm_buf none = {0};
        int still = edit((char *)c->again.text, c->again.n, sp, &g, &none);
        ccm_buf_free(&none);
        if (still) return result_error("failed to reach desired state: the file still differs after the write");
        f = g;
        ccm_buf_puts(out, ",\"messages\":[");
        ccm_buf_put_string(out, what->data, what->len);
        ccm_buf_putc(out, ']');
    }
    ccm_buf_puts(out, ",\"final_ensure\":");
    ccm_buf_puts(out, f.exists ? "\"present\"" : "\"absent\"");
    ccm_buf_puts(out, ",\"state\":");
    put_state(out, sp, &f);
    ccm_buf_putc(out, '}');
    return ccm_output(out->data, out->len);
}

CCM_EXPORT(ccm_status) int32_t status(void) {
    call c = {0};
    int32_t rc = do_status(&c);
    call_free(&c);
    return rc;
}

CCM_EXPORT(ccm_apply) int32_t apply(void) {
    call c = {0};
    int32_t rc = do_apply(&c);
    call_free(&c);
    return rc;
}
