package facts

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Gather returns the fact tree:
//
//	host.info.{hostname, os, platform, platformFamily, platformVersion,
//	           kernelVersion, kernelArch}
//	user.{name, uid, group, gid, home}   (ccm's addition; see user.go)
//
// It reads a few small files and makes one syscall, so it is fast (well
// under 5 ms) and never fails the run: a missing source gives "".
func Gather() map[string]any {
	return gather("/")
}

// gather reads os-release and friends under root, so tests can supply
// their own files.
func gather(root string) map[string]any {
	hostname, _ := os.Hostname()
	kernelVersion, kernelArch := uname()
	rel := readOSRelease(root)
	platform, family, version := platformInfo(root, rel)
	return map[string]any{
		"host": map[string]any{
			"info": map[string]any{
				"hostname":        hostname,
				"os":              runtime.GOOS,
				"platform":        platform,
				"platformFamily":  family,
				"platformVersion": version,
				"kernelVersion":   kernelVersion,
				"kernelArch":      kernelArch,
			},
		},
		"user": userFacts(),
	}
}

// uname returns the kernel release ("6.1.0-18-amd64") and machine
// ("x86_64"), as gopsutil's KernelVersion and KernelArch.
func uname() (release, machine string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", ""
	}
	return unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Machine[:])
}

// readOSRelease parses /etc/os-release (falling back to
// /usr/lib/os-release, as os-release(5) says) into its KEY=value pairs.
func readOSRelease(root string) map[string]string {
	for _, p := range []string{"etc/os-release", "usr/lib/os-release"} {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err == nil {
			return parseOSRelease(b)
		}
	}
	return map[string]string{}
}

func parseOSRelease(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out
}

// platformInfo maps os-release to gopsutil's platform, family and version.
func platformInfo(root string, rel map[string]string) (platform, family, version string) {
	id := strings.ToLower(rel["ID"])
	version = rel["VERSION_ID"]
	platform = id
	switch id {
	case "rhel":
		platform = "redhat"
	case "ol":
		platform = "oracle"
	case "amzn":
		platform = "amazon"
	case "opensuse-leap", "opensuse-tumbleweed", "opensuse":
		platform = "opensuse"
	}
	if platform == "debian" {
		// Debian's os-release has only the major version; gopsutil
		// reports the point release from /etc/debian_version.
		if b, err := os.ReadFile(filepath.Join(root, "etc/debian_version")); err == nil {
			if v := strings.TrimSpace(string(b)); v != "" {
				version = v
			}
		}
	}
	family = familyOf(platform)
	if family == "" {
		for _, like := range strings.Fields(strings.ToLower(rel["ID_LIKE"])) {
			if family = familyOf(like); family != "" {
				break
			}
		}
	}
	return platform, family, version
}

func familyOf(platform string) string {
	switch platform {
	case "debian", "ubuntu", "linuxmint", "raspbian", "pop", "kali", "elementary", "neon":
		return "debian"
	case "fedora":
		return "fedora"
	case "redhat", "rhel", "centos", "rocky", "almalinux", "oracle", "ol", "amazon", "amzn",
		"scientific", "cloudlinux", "xenserver", "ibm_powerkvm", "eurolinux", "virtuozzo":
		return "rhel"
	case "suse", "sles", "sled", "opensuse":
		return "suse"
	case "arch", "manjaro", "endeavouros":
		return "arch"
	case "alpine":
		return "alpine"
	case "gentoo":
		return "gentoo"
	case "slackware":
		return "slackware"
	case "exherbo":
		return "exherbo"
	}
	return ""
}
