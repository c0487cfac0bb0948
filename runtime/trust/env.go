package trust

import (
	"fmt"
	"slices"
	"strings"
)

// The environment rule of every exec (docs/security.md, "Exec"). A
// variable that makes a program load or run other code is part of the exec
// capability: it needs an entry in the env key of every grant of the chain,
// and the zero chain (no grant given) does not stand in for one, so even an
// unconfined root refuses LD_PRELOAD unless --grants names it. Free are
// only a PATH of system directories, plain locale variables and the exact
// pairs the built-in types use. Any other variable needs an entry in every
// grant of the chain (the zero chain allows it).

// SystemPath lists the directories a free PATH may hold.
var SystemPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// freePairs are the exact variables the built-in types set.
var freePairs = []string{
	"DEBIAN_FRONTEND=noninteractive",
	"APT_LISTBUGS_FRONTEND=none",
	"APT_LISTCHANGES_FRONTEND=none",
	"SYSTEMD_PAGER=",
	"SYSTEMD_COLORS=0",
}

// injectNames are variables that make a program load or run code chosen by
// their value: glibc's secure-mode list (unsecvars.h) and what the
// dynamic loader, libc, shells and common programs read.
var injectNames = []string{
	// glibc unsecvars.h, besides LD_* and MALLOC_*.
	"GCONV_PATH", "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
	"NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR",
	"GLIBC_TUNABLES",
	// Shell start-up and word splitting.
	"BASH_ENV", "ENV", "PS4", "PS1", "PS2", "PS3", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS",
	"IFS", "CDPATH", "GLOBIGNORE", "HISTFILE", "HOME", "ZDOTDIR", "INPUTRC", "SHELL",
	"FPATH", "KSH_ENV", "POSIXLY_CORRECT",
	// Interpreters and their module loaders.
	"PERLLIB", "PERLIO", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
	"CLASSPATH", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE", "PHPRC", "PHP_INI_SCAN_DIR",
	"TCLLIBPATH", "GUILE_LOAD_PATH", "OCAMLRUNPARAM", "R_PROFILE", "R_ENVIRON",
	"GOFLAGS", "GOPATH", "GOROOT", "GOTOOLCHAIN", "GOENV", "CGO_CFLAGS", "CGO_LDFLAGS",
	"RUSTFLAGS", "RUSTC", "RUSTC_WRAPPER", "RUSTDOCFLAGS", "PSMODULEPATH", "EMACSLOADPATH",
	"VIMINIT", "EXINIT", "MYVIMRC", "GVIMINIT", "AWKPATH", "AWKLIBPATH", "HGRCPATH", "CVS_RSH",
	"LV2_PATH", "LADSPA_PATH", "DSSI_PATH",
	// Build tools run these by value; the flags may load compiler plugins.
	"CC", "CXX", "CPP", "LD", "AR", "AS", "MAKE", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS",
	"CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS",
	// Programs run, and libraries loaded, by value.
	"EDITOR", "VISUAL", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "SYSTEMD_EDITOR", "BROWSER",
	"SUDO_ASKPASS", "SSH_ASKPASS", "GPG_AGENT_INFO", "LESSOPEN", "LESSCLOSE", "LESSKEY",
	"OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES",
	"GTK_MODULES", "GTK_PATH", "QT_PLUGIN_PATH", "GIO_EXTRA_MODULES", "GDK_PIXBUF_MODULE_FILE",
	"SASL_PATH", "KRB5_CONFIG", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
	"APT_CONFIG", "DPKG_ADMINDIR", "DPKG_ROOT", "RPM_CONFIGDIR",
	"DBUS_SYSTEM_BUS_ADDRESS", "SYSTEMD_UNIT_PATH", "LIBRARY_PATH", "CPATH",
	"PKG_CONFIG_PATH", "PATH",
}

// injectPrefixes are families of such variables.
var injectPrefixes = []string{
	"LD_", "MALLOC_", "GLIBC_", "BASH_FUNC_", "PYTHON", "PERL5", "PERL_", "RUBY", "NODE_",
	"NPM_CONFIG_", "LUA_", "TCL", "TK_", "GIT_", "DYLD_", "JAVA_", "GCONV_", "JULIA_", "ERL_",
	"DOTNET_", "CORECLR_", "COMPLUS_", "GNUPG", "XDG_", "DPKG_", "DEBCONF_", "APT_", "SYSTEMD_",
	"GIO_", "GTK_", "QT_", "GST_", "ALSA_", "LIBGL_", "LIBVA_", "VK_", "__EGL_", "GBM_",
	"CARGO_", "RUSTUP_", "CMAKE_", "RSYNC_", "PIP_", "VIRTUAL_ENV", "CONDA", "LESS",
}

// InjectsCode reports whether the KEY=VALUE entry belongs to the code-
// injection class: it needs an env entry naming it in every grant of a
// non-empty chain. The name match ignores case: some programs read
// lower-case twins, and a refusal costs only a grant entry. A locale
// variable is in the class when its value names a file (glibc then loads
// locale data, and gconv modules, from there).
func InjectsCode(kv string) bool {
	name, value, _ := strings.Cut(kv, "=")
	if isLocale(name) {
		return !plainLocale(value)
	}
	return injectsName(name)
}

func isLocale(name string) bool {
	return name == "LANG" || name == "LANGUAGE" || strings.HasPrefix(name, "LC_") && localeName(name[3:])
}

func injectsName(name string) bool {
	up := strings.ToUpper(name)
	if slices.Contains(injectNames, up) {
		return true
	}
	for _, p := range injectPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

// EnvFree reports whether the KEY=VALUE entry needs no grant: a PATH of
// SystemPath directories only, a plain locale variable (LANG, LANGUAGE,
// LC_*) whose value names no file, or one of the built-in types' pairs.
func EnvFree(kv string) bool {
	name, value, ok := strings.Cut(kv, "=")
	if !ok {
		return false
	}
	switch {
	case name == "PATH":
		if value == "" {
			return false
		}
		for _, dir := range strings.Split(value, ":") {
			if !slices.Contains(SystemPath, dir) {
				return false
			}
		}
		return true
	case isLocale(name):
		return plainLocale(value)
	}
	return slices.Contains(freePairs, kv)
}

func localeName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// plainLocale is a locale value that names no file: letters, digits and
// "_.-@:" (LANGUAGE is a colon list), never a "/" or a leading ".".
func plainLocale(v string) bool {
	if v == "" || len(v) > 64 || v[0] == '.' {
		return false
	}
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' || c == '.' || c == '-' || c == '@' || c == ':':
		default:
			return false
		}
	}
	return !strings.Contains(v, "..")
}

// envEntryAllows reports whether one grant's env list names kv: an entry
// "NAME" (any value) or "NAME=VALUE" (exactly that), or "*" for a variable
// outside the code-injection class.
func envEntryAllows(entries []string, name, kv string) bool {
	for _, e := range entries {
		switch {
		case e == kv, e == name:
			return true
		case e == "*" && !InjectsCode(kv):
			return true
		}
	}
	return false
}

// EnvAllowed checks one KEY=VALUE entry of an exec's environment against
// the chain. It returns "" when allowed, else the rule that refuses it, for
// the error message.
func (c Chain) EnvAllowed(kv string) string {
	name, _, ok := strings.Cut(kv, "=")
	if !ok || name == "" || strings.ContainsAny(name, "\x00") {
		return fmt.Sprintf("environment entry %q is not NAME=VALUE", kv)
	}
	if EnvFree(kv) {
		return ""
	}
	inject := InjectsCode(kv)
	if inject && len(c) == 0 {
		return fmt.Sprintf("%s can make the program load or run other code; it runs only with an env entry %q (or %q) in --grants", name, name, kv)
	}
	for i, g := range c {
		if !envEntryAllows(g.Env, name, kv) {
			if inject {
				return fmt.Sprintf("%s can make the program load or run other code; it needs an env entry %q (or %q) in every grant of the chain, and grant %d of %d has none", name, name, kv, i+1, len(c))
			}
			return fmt.Sprintf("%s is not in the env of grant %d of %d; add %q (or %q, or \"*\") to its env", name, i+1, len(c), name, kv)
		}
	}
	return ""
}
