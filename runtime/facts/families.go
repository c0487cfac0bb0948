package facts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/shirou/gopsutil/v4/net"
)

// The families below copy gopsutil's structs into plain maps and []any
// lists under gopsutil's JSON names, so templates reach them with the names
// `ccm facts` prints (Facts.host.info.platformFamily) and
// data.Copy/Merge can deep-copy them.

// hostFacts is host.info.*, gopsutil's host.InfoStat without calling
// host.Info (see platform.go for why).
func hostFacts(ctx context.Context) (map[string]any, error) {
	hostname, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("hostname: %w", err)
	}
	info := map[string]any{
		"hostname": hostname,
		"os":       runtime.GOOS,
		"procs":    numProcs(),
	}
	// Each of these gives its zero value on error, as host.Info does:
	// virtualization detection, for one, needs files only root can read.
	info["bootTime"], _ = host.BootTimeWithContext(ctx)
	info["uptime"], _ = host.UptimeWithContext(ctx)
	info["kernelVersion"], _ = host.KernelVersionWithContext(ctx)
	info["kernelArch"], _ = host.KernelArch()
	info["virtualizationSystem"], info["virtualizationRole"], _ = host.VirtualizationWithContext(ctx)
	info["hostId"], _ = host.HostIDWithContext(ctx)
	info["platform"], info["platformFamily"], info["platformVersion"] = platformInfo("/", readOSRelease("/"))
	return map[string]any{"info": info}, nil
}

// numProcs counts the processes in /proc, as host.Info's procs does on
// Linux; elsewhere it is 0.
func numProcs() uint64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var n uint64
	for _, e := range entries {
		if _, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && e.IsDir() {
			n++
		}
	}
	return n
}

// networkFacts is network.interfaces: a list of {index, name, mtu,
// hardwareAddr, flags, addrs: [{addr}]}.
func networkFacts(ctx context.Context) (map[string]any, error) {
	ifs, err := net.InterfacesWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("network interfaces: %w", err)
	}
	list := make([]any, 0, len(ifs))
	for _, i := range ifs {
		addrs := make([]any, 0, len(i.Addrs))
		for _, a := range i.Addrs {
			addrs = append(addrs, map[string]any{"addr": a.Addr})
		}
		list = append(list, map[string]any{
			"index":        i.Index,
			"name":         i.Name,
			"mtu":          i.MTU,
			"hardwareAddr": i.HardwareAddr,
			"flags":        anyList(i.Flags),
			"addrs":        addrs,
		})
	}
	return map[string]any{"interfaces": list}, nil
}

// partitionFacts is partition.partitions: physical file systems as
// {device, mountpoint, fstype, opts, usage: {total, free, used,
// usedPercent}}; usage is absent when statfs fails for that mount.
func partitionFacts(ctx context.Context) (map[string]any, error) {
	parts, err := disk.PartitionsWithContext(ctx, false)
	if err != nil && len(parts) == 0 {
		return nil, fmt.Errorf("partitions: %w", err)
	}
	list := make([]any, 0, len(parts))
	for _, p := range parts {
		m := map[string]any{
			"device":     p.Device,
			"mountpoint": p.Mountpoint,
			"fstype":     p.Fstype,
			"opts":       anyList(p.Opts),
		}
		if u, err := disk.UsageWithContext(ctx, p.Mountpoint); err == nil {
			m["usage"] = map[string]any{
				"total":       u.Total,
				"free":        u.Free,
				"used":        u.Used,
				"usedPercent": u.UsedPercent,
			}
		}
		list = append(list, m)
	}
	return map[string]any{"partitions": list}, nil
}

// cpuFacts summarises the per-CPU info list: modelName, vendorId and mhz of
// the first CPU, cores (physical) and count (logical).
func cpuFacts(ctx context.Context) (map[string]any, error) {
	out := map[string]any{"modelName": "", "vendorId": "", "mhz": 0.0, "cores": 0, "count": 0}
	infos, infoErr := cpu.InfoWithContext(ctx)
	if len(infos) > 0 {
		out["modelName"] = infos[0].ModelName
		out["vendorId"] = infos[0].VendorID
		out["mhz"] = infos[0].Mhz
	}
	logical, countErr := cpu.CountsWithContext(ctx, true)
	out["count"] = logical
	if physical, err := cpu.CountsWithContext(ctx, false); err == nil {
		out["cores"] = physical
	}
	if len(infos) == 0 && countErr != nil {
		return nil, fmt.Errorf("cpu: %w", errors.Join(infoErr, countErr))
	}
	return out, nil
}

// memoryFacts is memory.virtual.{total, available, used, free,
// usedPercent} and memory.swap.{total, used, free, usedPercent}.
func memoryFacts(ctx context.Context) (map[string]any, error) {
	v, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("virtual memory: %w", err)
	}
	out := map[string]any{"virtual": map[string]any{
		"total":       v.Total,
		"available":   v.Available,
		"used":        v.Used,
		"free":        v.Free,
		"usedPercent": v.UsedPercent,
	}}
	if s, err := mem.SwapMemoryWithContext(ctx); err == nil {
		out["swap"] = map[string]any{
			"total":       s.Total,
			"used":        s.Used,
			"free":        s.Free,
			"usedPercent": s.UsedPercent,
		}
	}
	return out, nil
}

// anyList turns a []string into the []any every fact list uses.
func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
