/*
 * ccm.h: write a ccm resource plugin in C. One header, static inline
 * functions only; it needs nothing beyond what wasi-libc gives (malloc,
 * memcpy, strlen) and makes no WASI calls.
 *
 * A plugin is a WebAssembly module following the Extism ABI (the kernel in
 * the import module "extism:host/env") that exports ccm_describe,
 * ccm_validate, ccm_status and ccm_apply, each returning 0 (or 1 after
 * ccm_fail). The documents are the JSON of sdk/abi; host calls live in the
 * import module "extism:host/user" (ccm_fs_stat, ccm_fs_read, ...), each
 * taking the kernel offset of a JSON request and returning one of a JSON
 * reply {"ok": {...}} or {"error": {"code", "message"}}. The contract is
 * docs/plugins.md; sdk/examples/c-ini_setting is a complete plugin.
 *
 * Build (Debian: apt-get install clang-14 lld-14 wasi-libc
 * libclang-rt-14-dev-wasm32):
 *
 *   clang-14 --target=wasm32-wasi --sysroot=/usr -Oz -mexec-model=reactor \
 *     -fuse-ld=lld -Wl,--strip-all -I sdk/c -o my_type.wasm my_type.c
 *
 * In brief:
 *
 *   CCM_EXPORT(ccm_apply) int32_t my_apply(void) {
 *       size_t n;
 *       char *in = ccm_input(&n);
 *       ccm_json req = ccm_json_parse(in, n);
 *       char *path = ccm_json_string(ccm_json_path(req, "properties.path"), NULL);
 *       ...
 *       ccm_buf q = {0};
 *       ccm_buf_puts(&q, "{\"path\":");
 *       ccm_buf_put_string(&q, path, strlen(path));
 *       ccm_buf_puts(&q, "}");
 *       ccm_reply r = ccm_call(ccm_host_fs_stat, &q);
 *       if (!r.ok) ... r.code, r.message ...
 *       ... ccm_json_get(r.value, "exists") ...
 *       return ccm_output_buf(&out);
 *   }
 *
 * Memory: everything is malloc'ed and may be left to the Extism call's end
 * (the host keeps one instance per run; a plugin that allocates much per
 * call frees what it allocated with free, ccm_buf_free and ccm_reply_free).
 */
#ifndef CCM_H
#define CCM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CCM_ABI 1

/* CCM_EXPORT(name) exports the function that follows under name. */
#define CCM_EXPORT(name) __attribute__((export_name(#name)))

/* ---- Extism kernel imports (extism:host/env) ---------------------------- */

#define CCM_KERNEL(name) __attribute__((import_module("extism:host/env"), import_name(#name)))

CCM_KERNEL(input_length) uint64_t ccm_kernel_input_length(void);
CCM_KERNEL(input_load_u8) uint32_t ccm_kernel_input_load_u8(uint64_t offset);
CCM_KERNEL(input_load_u64) uint64_t ccm_kernel_input_load_u64(uint64_t offset);
CCM_KERNEL(alloc) uint64_t ccm_kernel_alloc(uint64_t length);
CCM_KERNEL(free) void ccm_kernel_free(uint64_t offset);
CCM_KERNEL(length) uint64_t ccm_kernel_length(uint64_t offset);
CCM_KERNEL(load_u8) uint32_t ccm_kernel_load_u8(uint64_t offset);
CCM_KERNEL(load_u64) uint64_t ccm_kernel_load_u64(uint64_t offset);
CCM_KERNEL(store_u8) void ccm_kernel_store_u8(uint64_t offset, uint32_t value);
CCM_KERNEL(store_u64) void ccm_kernel_store_u64(uint64_t offset, uint64_t value);
CCM_KERNEL(output_set) void ccm_kernel_output_set(uint64_t offset, uint64_t length);
CCM_KERNEL(error_set) void ccm_kernel_error_set(uint64_t offset);

/* ---- ccm host calls (extism:host/user) ---------------------------------- */

#define CCM_HOST_CALL(name) \
    __attribute__((import_module("extism:host/user"), import_name("ccm_" #name))) \
    uint64_t ccm_host_##name(uint64_t request);

CCM_HOST_CALL(fs_stat)
CCM_HOST_CALL(fs_read)
CCM_HOST_CALL(fs_write)
CCM_HOST_CALL(fs_mkdir)
CCM_HOST_CALL(fs_remove)
CCM_HOST_CALL(fs_chown)
CCM_HOST_CALL(fs_chmod)
CCM_HOST_CALL(fs_list)
CCM_HOST_CALL(exec)
CCM_HOST_CALL(user_lookup)
CCM_HOST_CALL(group_lookup)
CCM_HOST_CALL(lookup)
CCM_HOST_CALL(log)

/* ---- growable byte buffer ----------------------------------------------- */

/* ccm_buf is a growable byte buffer; the zero value is empty and ready. data
 * is always NUL-terminated once anything was written. Allocation failure
 * aborts (the host reports the trap and discards the instance). */
typedef struct {
    char *data;
    size_t len, cap;
} ccm_buf;

static inline void ccm_buf_grow(ccm_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = (char *)realloc(b->data, cap);
    if (!p) __builtin_trap();
    b->data = p;
    b->cap = cap;
}

static inline void ccm_buf_put(ccm_buf *b, const void *p, size_t n) {
    ccm_buf_grow(b, n);
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

static inline void ccm_buf_puts(ccm_buf *b, const char *s) { ccm_buf_put(b, s, strlen(s)); }

static inline void ccm_buf_putc(ccm_buf *b, char c) { ccm_buf_put(b, &c, 1); }

static inline void ccm_buf_free(ccm_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ccm_buf_put_uint writes v in decimal. */
static inline void ccm_buf_put_uint(ccm_buf *b, uint64_t v) {
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    ccm_buf_put(b, tmp + i, sizeof tmp - i);
}

/* ccm_buf_put_string writes s[0:n] as a quoted JSON string. Bytes that are
 * not valid UTF-8 pass through; the host's decoder replaces them. */
static inline void ccm_buf_put_string(ccm_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    ccm_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': ccm_buf_put(b, "\\\"", 2); break;
        case '\\': ccm_buf_put(b, "\\\\", 2); break;
        case '\n': ccm_buf_put(b, "\\n", 2); break;
        case '\r': ccm_buf_put(b, "\\r", 2); break;
        case '\t': ccm_buf_put(b, "\\t", 2); break;
        default:
            if (c < 0x20) {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                ccm_buf_put(b, u, 6);
            } else {
                ccm_buf_putc(b, (char)c);
            }
        }
    }
    ccm_buf_putc(b, '"');
}

/* ccm_buf_put_cstring writes a NUL-terminated string as a JSON string. */
static inline void ccm_buf_put_cstring(ccm_buf *b, const char *s) { ccm_buf_put_string(b, s, strlen(s)); }

/* ccm_buf_put_base64 writes p[0:n] as a quoted base64 JSON string, which is
 * how byte fields (ccm_fs_write content, ccm_fs_read content) travel. */
static inline void ccm_buf_put_base64(ccm_buf *b, const void *p, size_t n) {
    static const char enc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = (const unsigned char *)p;
    ccm_buf_grow(b, (n + 2) / 3 * 4 + 2);
    ccm_buf_putc(b, '"');
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        char q[4] = {enc[v >> 18], enc[(v >> 12) & 63], enc[(v >> 6) & 63], enc[v & 63]};
        ccm_buf_put(b, q, 4);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        char q[4] = {enc[v >> 18], enc[(v >> 12) & 63], '=', '='};
        ccm_buf_put(b, q, 4);
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        char q[4] = {enc[v >> 18], enc[(v >> 12) & 63], enc[(v >> 6) & 63], '='};
        ccm_buf_put(b, q, 4);
    }
    ccm_buf_putc(b, '"');
}

/* ---- reading JSON ------------------------------------------------------- */

/* ccm_json is a view of one JSON value inside a document (no copy). A
 * missing value has p == NULL. */
typedef struct {
    const char *p;
    size_t n;
} ccm_json;

static inline size_t ccm_json__ws(const char *s, size_t n, size_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

/* ccm_json__skip returns the index just past the value starting at s[i], or
 * (size_t)-1 when the text there is not a well-formed value. Nesting is
 * bounded so a hostile document cannot exhaust the stack. */
static inline size_t ccm_json__skip(const char *s, size_t n, size_t i, int depth) {
    if (i >= n || depth > 256) return (size_t)-1;
    char c = s[i];
    if (c == '"') {
        for (i++; i < n; i++) {
            if (s[i] == '\\') i++;
            else if (s[i] == '"') return i + 1;
        }
        return (size_t)-1;
    }
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        i = ccm_json__ws(s, n, i + 1);
        if (i < n && s[i] == close) return i + 1;
        for (;;) {
            if (c == '{') {
                if (i >= n || s[i] != '"') return (size_t)-1;
                i = ccm_json__skip(s, n, i, depth + 1);
                if (i == (size_t)-1) return i;
                i = ccm_json__ws(s, n, i);
                if (i >= n || s[i] != ':') return (size_t)-1;
                i = ccm_json__ws(s, n, i + 1);
            }
            i = ccm_json__skip(s, n, i, depth + 1);
            if (i == (size_t)-1) return i;
            i = ccm_json__ws(s, n, i);
            if (i < n && s[i] == ',') {
                i = ccm_json__ws(s, n, i + 1);
                continue;
            }
            if (i < n && s[i] == close) return i + 1;
            return (size_t)-1;
        }
    }
    /* number, true, false, null */
    size_t start = i;
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' &&
           s[i] != '\n' && s[i] != '\r' && s[i] != ':' && s[i] != '"')
        i++;
    return i > start ? i : (size_t)-1;
}

/* ccm_json_parse returns the one value held by s[0:n], or a missing value
 * when the text is not exactly one well-formed JSON value. */
static inline ccm_json ccm_json_parse(const char *s, size_t n) {
    ccm_json none = {0, 0};
    size_t i = ccm_json__ws(s, n, 0);
    size_t end = ccm_json__skip(s, n, i, 0);
    if (end == (size_t)-1 || ccm_json__ws(s, n, end) != n) return none;
    ccm_json v = {s + i, end - i};
    return v;
}

/* ccm_json_kind is the first byte of v: '{', '[', '"', 't', 'f', 'n', a digit
 * or '-'; 0 for a missing value. */
static inline char ccm_json_kind(ccm_json v) { return v.p && v.n ? v.p[0] : 0; }

/* ccm_json__key_is reports whether the quoted key k[0:n] (escapes
 * undecoded) equals name. Keys of the ccm documents need no escapes. */
static inline int ccm_json__key_is(const char *k, size_t n, const char *name) {
    size_t m = strlen(name);
    return n == m + 2 && memcmp(k + 1, name, m) == 0;
}

/* ccm_json_get returns member name of object v, or a missing value. */
static inline ccm_json ccm_json_get(ccm_json v, const char *name) {
    ccm_json none = {0, 0};
    if (ccm_json_kind(v) != '{') return none;
    const char *s = v.p;
    size_t n = v.n, i = ccm_json__ws(s, n, 1);
    while (i < n && s[i] == '"') {
        size_t kend = ccm_json__skip(s, n, i, 1);
        if (kend == (size_t)-1) return none;
        size_t vstart = ccm_json__ws(s, n, ccm_json__ws(s, n, kend) + 1);
        size_t vend = ccm_json__skip(s, n, vstart, 1);
        if (vend == (size_t)-1) return none;
        if (ccm_json__key_is(s + i, kend - i, name)) {
            ccm_json out = {s + vstart, vend - vstart};
            return out;
        }
        i = ccm_json__ws(s, n, vend);
        if (i < n && s[i] == ',') i = ccm_json__ws(s, n, i + 1);
    }
    return none;
}

/* ccm_json_path follows a dotted path of member names: "properties.path". */
static inline ccm_json ccm_json_path(ccm_json v, const char *path) {
    char name[128];
    while (*path && v.p) {
        size_t k = 0;
        while (path[k] && path[k] != '.' && k < sizeof name - 1) {
            name[k] = path[k];
            k++;
        }
        name[k] = 0;
        v = ccm_json_get(v, name);
        path += k;
        if (*path == '.') path++;
    }
    return v;
}

/* ccm_json_bool is 1 for true, 0 for anything else. */
static inline int ccm_json_bool(ccm_json v) { return v.n == 4 && memcmp(v.p, "true", 4) == 0; }

/* ccm_json_uint reads a non-negative integer, or def when v is not one. */
static inline uint64_t ccm_json_uint(ccm_json v, uint64_t def) {
    if (!v.p || !v.n) return def;
    uint64_t x = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9') return def;
        x = x * 10 + (uint64_t)(v.p[i] - '0');
    }
    return x;
}

static inline int ccm_json__hex(const char *p, uint32_t *out) {
    uint32_t x = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        x <<= 4;
        if (c >= '0' && c <= '9') x |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') x |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') x |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = x;
    return 1;
}

static inline void ccm_json__utf8(ccm_buf *b, uint32_t r) {
    char u[4];
    if (r < 0x80) {
        ccm_buf_putc(b, (char)r);
    } else if (r < 0x800) {
        u[0] = (char)(0xC0 | r >> 6), u[1] = (char)(0x80 | (r & 63));
        ccm_buf_put(b, u, 2);
    } else if (r < 0x10000) {
        u[0] = (char)(0xE0 | r >> 12), u[1] = (char)(0x80 | ((r >> 6) & 63)), u[2] = (char)(0x80 | (r & 63));
        ccm_buf_put(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | r >> 18), u[1] = (char)(0x80 | ((r >> 12) & 63));
        u[2] = (char)(0x80 | ((r >> 6) & 63)), u[3] = (char)(0x80 | (r & 63));
        ccm_buf_put(b, u, 4);
    }
}

/* ccm_json_string decodes a JSON string into a new NUL-terminated UTF-8
 * string (free it with free), its length in *len when len is not NULL.
 * NULL when v is not a string. A string may hold NUL bytes: use *len. */
static inline char *ccm_json_string(ccm_json v, size_t *len) {
    if (ccm_json_kind(v) != '"' || v.n < 2) return NULL;
    ccm_buf b = {0};
    ccm_buf_grow(&b, v.n);
    const char *s = v.p + 1, *end = v.p + v.n - 1;
    while (s < end) {
        if (*s != '\\') {
            ccm_buf_putc(&b, *s++);
            continue;
        }
        if (++s >= end) break;
        char c = *s++;
        switch (c) {
        case 'n': ccm_buf_putc(&b, '\n'); break;
        case 't': ccm_buf_putc(&b, '\t'); break;
        case 'r': ccm_buf_putc(&b, '\r'); break;
        case 'b': ccm_buf_putc(&b, '\b'); break;
        case 'f': ccm_buf_putc(&b, '\f'); break;
        case 'u': {
            uint32_t r, lo;
            if (end - s < 4 || !ccm_json__hex(s, &r)) {
                r = 0xFFFD;
            } else {
                s += 4;
                if (r >= 0xD800 && r < 0xDC00 && end - s >= 6 && s[0] == '\\' && s[1] == 'u' &&
                    ccm_json__hex(s + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    r = 0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00);
                    s += 6;
                } else if (r >= 0xD800 && r < 0xE000) {
                    r = 0xFFFD;
                }
            }
            ccm_json__utf8(&b, r);
            break;
        }
        default: ccm_buf_putc(&b, c); /* \" \\ \/ */
        }
    }
    ccm_buf_grow(&b, 0);
    b.data[b.len] = 0;
    if (len) *len = b.len;
    return b.data;
}

/* ccm_json_base64 decodes a base64 JSON string (a byte field) into new
 * memory, NUL-terminated for convenience; NULL when v is not valid base64. */
static inline unsigned char *ccm_json_base64(ccm_json v, size_t *len) {
    if (ccm_json_kind(v) != '"' || v.n < 2) return NULL;
    const char *s = v.p + 1;
    size_t n = v.n - 2;
    unsigned char *out = (unsigned char *)malloc(n / 4 * 3 + 4);
    if (!out) __builtin_trap();
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        uint32_t d;
        if (c >= 'A' && c <= 'Z') d = (uint32_t)(c - 'A');
        else if (c >= 'a' && c <= 'z') d = (uint32_t)(c - 'a' + 26);
        else if (c >= '0' && c <= '9') d = (uint32_t)(c - '0' + 52);
        else if (c == '+') d = 62;
        else if (c == '/') d = 63;
        else if (c == '=') break;
        else {
            free(out);
            return NULL;
        }
        acc = acc << 6 | d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    out[o] = 0;
    if (len) *len = o;
    return out;
}

/* ---- input, output, errors ---------------------------------------------- */

/* ccm_input returns the export's input document (NUL-terminated). */
static inline char *ccm_input(size_t *len) {
    uint64_t n = ccm_kernel_input_length();
    char *buf = (char *)malloc((size_t)n + 1);
    if (!buf) __builtin_trap();
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = ccm_kernel_input_load_u64(i);
        memcpy(buf + i, &w, 8);
    }
    for (; i < n; i++) buf[i] = (char)ccm_kernel_input_load_u8(i);
    buf[n] = 0;
    if (len) *len = (size_t)n;
    return buf;
}

/* ccm_block_put copies p[0:n] into a new kernel block and returns its
 * offset (what host calls, output_set and error_set take). */
static inline uint64_t ccm_block_put(const void *p, size_t n) {
    const char *s = (const char *)p;
    uint64_t off = ccm_kernel_alloc(n);
    if (!off) return 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        ccm_kernel_store_u64(off + i, w);
    }
    for (; i < n; i++) ccm_kernel_store_u8(off + i, (unsigned char)s[i]);
    return off;
}

/* ccm_block_get copies the kernel block at offset into new memory,
 * NUL-terminated. */
static inline char *ccm_block_get(uint64_t off, size_t *len) {
    uint64_t n = ccm_kernel_length(off);
    char *buf = (char *)malloc((size_t)n + 1);
    if (!buf) __builtin_trap();
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = ccm_kernel_load_u64(off + i);
        memcpy(buf + i, &w, 8);
    }
    for (; i < n; i++) buf[i] = (char)ccm_kernel_load_u8(off + i);
    buf[n] = 0;
    if (len) *len = (size_t)n;
    return buf;
}

/* ccm_output sets the export's output document; returns 0 for the export to
 * return. */
static inline int32_t ccm_output(const void *p, size_t n) {
    ccm_kernel_output_set(ccm_block_put(p, n), n);
    return 0;
}

/* ccm_output_buf outputs b and frees it. */
static inline int32_t ccm_output_buf(ccm_buf *b) {
    int32_t rc = ccm_output(b->data ? b->data : "", b->len);
    ccm_buf_free(b);
    return rc;
}

/* ccm_fail fails the export call itself (not the resource: a resource
 * failure is the "error" field of the output document) and returns 1 for
 * the export to return. Use it for input the plugin cannot decode. */
static inline int32_t ccm_fail(const char *message) {
    ccm_kernel_error_set(ccm_block_put(message, strlen(message)));
    return 1;
}

/* ---- host calls ---------------------------------------------------------- */

/* ccm_reply is the answer to a host call. When ok, value is the "ok"
 * document; otherwise code and message say why ("denied", "not_found", ...,
 * see sdk/abi). raw owns the memory both point into. */
typedef struct {
    int ok;
    ccm_json value;
    char *code;
    char *message;
    char *raw;
} ccm_reply;

/* ccm_reply_read decodes the reply block a host function returned. */
static inline ccm_reply ccm_reply_read(uint64_t off) {
    ccm_reply r = {0};
    if (!off) {
        r.code = ccm_json_string((ccm_json){"\"io\"", 4}, NULL);
        r.message = ccm_json_string((ccm_json){"\"the host returned no reply\"", 28}, NULL);
        return r;
    }
    size_t n;
    r.raw = ccm_block_get(off, &n);
    ccm_kernel_free(off);
    ccm_json doc = ccm_json_parse(r.raw, n);
    ccm_json ok = ccm_json_get(doc, "ok");
    if (ok.p) {
        r.ok = 1;
        r.value = ok;
        return r;
    }
    ccm_json err = ccm_json_get(doc, "error");
    r.code = ccm_json_string(ccm_json_get(err, "code"), NULL);
    r.message = ccm_json_string(ccm_json_get(err, "message"), NULL);
    if (!r.code) r.code = ccm_json_string((ccm_json){"\"io\"", 4}, NULL);
    if (!r.message) r.message = ccm_json_string((ccm_json){"\"malformed host reply\"", 22}, NULL);
    return r;
}

static inline void ccm_reply_free(ccm_reply *r) {
    free(r->code);
    free(r->message);
    free(r->raw);
    memset(r, 0, sizeof *r);
}

/* ccm_call makes the host call fn (ccm_host_fs_stat, ...) with the JSON
 * request in the buffer req: ccm_reply r = ccm_call(ccm_host_fs_read, &q); */
#define ccm_call(fn, req) \
    ccm_reply_read(fn(ccm_block_put((req)->data ? (req)->data : "{}", (req)->data ? (req)->len : 2)))

/* ccm_log writes a line to the host log, attributed to the resource; level
 * is debug, info, warn or error. */
static inline void ccm_log(const char *level, const char *message) {
    ccm_buf q = {0};
    ccm_buf_puts(&q, "{\"level\":");
    ccm_buf_put_cstring(&q, level);
    ccm_buf_puts(&q, ",\"message\":");
    ccm_buf_put_cstring(&q, message);
    ccm_buf_putc(&q, '}');
    ccm_reply r = ccm_call(ccm_host_log, &q);
    ccm_reply_free(&r);
    ccm_buf_free(&q);
}

#endif /* CCM_H */
