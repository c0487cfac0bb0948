#!/usr/bin/env bash
# Builds the example plugins of sdk/examples from source into OUTDIR, one
# TYPE.wasm each, with the commands docs/plugins.md shows:
#
#   motd.wasm         Go             sdk/examples/motd
#   file_line.wasm    AssemblyScript sdk/examples/as-file_line
#   ini_setting.wasm  C              sdk/examples/c-ini_setting
#   sysctl_conf.wasm  Rust           sdk/examples/rust-sysctl_conf
#
# usage: scripts/build-examples.sh [--no-install] OUTDIR
#
# Toolchains: Go; node and npm (the AssemblyScript compiler comes from the
# example's package-lock.json through `npm ci`, run here when node_modules is
# missing unless --no-install); clang-14, lld-14, wasi-libc and
# libclang-rt-14-dev-wasm32 from Debian; a rustc with the
# wasm32-unknown-unknown target (Debian: rustc libstd-rust-dev-wasm32 lld-14;
# or rustup target add wasm32-unknown-unknown). A missing toolchain exits 2 with a
# message saying what to install; a failed build exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

install=1
if [ "${1:-}" = "--no-install" ]; then
  install=0
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: scripts/build-examples.sh [--no-install] OUTDIR" >&2
  exit 64
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)

as_dir=sdk/examples/as-file_line
c_src=sdk/examples/c-ini_setting/ini_setting.c
rust_src=sdk/examples/rust-sysctl_conf/sysctl_conf.rs

# The first rustc that has the wasm32-unknown-unknown standard library: the
# one on PATH (rustup's, when its target is added) or Debian's.
rustc=
for r in rustc /usr/bin/rustc; do
  if command -v "$r" >/dev/null && [ -d "$("$r" --print sysroot 2>/dev/null)/lib/rustlib/wasm32-unknown-unknown" ]; then
    rustc=$r
    break
  fi
done

missing=()
command -v go >/dev/null || missing+=("go (https://go.dev/dl)")
command -v node >/dev/null && command -v npm >/dev/null || missing+=("node and npm (apt-get install nodejs npm)")
command -v clang-14 >/dev/null || missing+=("clang-14 (apt-get install clang-14)")
command -v wasm-ld-14 >/dev/null || missing+=("lld-14 (apt-get install lld-14)")
[ -f /usr/lib/wasm32-wasi/libc.a ] || missing+=("wasi-libc (apt-get install wasi-libc)")
compgen -G '/usr/lib/llvm-14/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a' >/dev/null ||
  missing+=("libclang-rt-14-dev-wasm32 (apt-get install libclang-rt-14-dev-wasm32)")
[ -n "$rustc" ] ||
  missing+=("rustc for wasm32-unknown-unknown (apt-get install rustc libstd-rust-dev-wasm32 lld-14)")
if [ ${#missing[@]} -eq 0 ] && [ ! -x "$as_dir/node_modules/.bin/asc" ]; then
  if [ $install = 1 ]; then
    (cd "$as_dir" && npm ci --no-audit --no-fund --loglevel=error)
  else
    missing+=("the AssemblyScript compiler (run: cd $as_dir && npm ci)")
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-examples: missing toolchain:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 2
fi

timed() { # label, command...
  local label=$1 start end
  shift
  start=$(date +%s%N)
  "$@"
  end=$(date +%s%N)
  printf '%-18s %6d bytes  %5d ms\n' "$label" "$(stat -c %s "$out/$label")" $(((end - start) / 1000000))
}

# Go (the commands of docs/plugins.md, "Writing a plugin in Go")
timed motd.wasm env -C sdk/examples/motd GOOS=wasip1 GOARCH=wasm \
  go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o "$out/motd.wasm" .

# AssemblyScript
timed file_line.wasm env -C "$as_dir" \
  npx asc index.ts --path node_modules --outFile "$out/file_line.wasm" \
  --use abort=index/ccmAbort --optimize --shrinkLevel 2 --noAssert

# C
timed ini_setting.wasm clang-14 --target=wasm32-wasi --sysroot=/usr -Oz -mexec-model=reactor \
  -fuse-ld=lld -Wl,--strip-all -Wall -Werror -I sdk/c \
  -o "$out/ini_setting.wasm" "$c_src"

# Rust (the commands of docs/plugins.md, "Writing a plugin in Rust")
timed sysctl_conf.wasm "$rustc" --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib \
  -C opt-level=z -C lto -C codegen-units=1 -C panic=abort -C strip=symbols -D warnings \
  -o "$out/sysctl_conf.wasm" "$rust_src"
