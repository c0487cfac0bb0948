package facts

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The platform facts are read here rather than by gopsutil's
// host.Info: without /etc/lsb-release (Debian, most containers) gopsutil
// runs /usr/bin/lsb_release, a Python script that took 57 ms of the 59 ms
// host.Info needed. These functions give gopsutil's names and values from
// os-release in microseconds.

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
