package host

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// scopeKey names the trust scope a plugin call acts for: the sha256 of its
// grant chain and of the limits that apply to it. A plugin instance serves
// one scope key only (plugin.instanceFor), so whatever the guest keeps in
// its memory and globals never reaches a call made under another grant or
// other limits. Two scopes with identical grant chains and limits (sibling
// applies granting the same) share instances: anything one may read, the
// other may read and write too.
type scopeKey [sha256.Size]byte

// keyOf returns the scope key of a call for caller, whose limits are the
// host's l lowered by caller.Limits. Every field goes in with its length,
// so two different chains never encode alike.
func keyOf(caller trust.Caller, l Limits) scopeKey {
	h := sha256.New()
	var buf [8]byte
	num := func(n uint64) {
		binary.LittleEndian.PutUint64(buf[:], n)
		h.Write(buf[:])
	}
	l = l.lowered(caller.Limits)
	for _, n := range []uint64{uint64(l.MemoryPages), uint64(l.CallTimeout), uint64(l.OutputBytes), uint64(l.RequestBytes), uint64(l.ExecOutputBytes), uint64(l.HostCalls)} {
		num(n)
	}
	num(uint64(len(caller.Grants)))
	for _, g := range caller.Grants {
		for _, list := range [][]string{g.FSRead, g.FSWrite, g.Exec, g.Net, g.ProbeExec, g.Env} {
			strs(h, num, list)
		}
		for _, b := range []bool{g.Users, g.Setid} {
			if b {
				num(1)
			} else {
				num(0)
			}
		}
	}
	var k scopeKey
	h.Sum(k[:0])
	return k
}

// strs writes a list of strings, each with its length, after the count.
func strs(h hash.Hash, num func(uint64), list []string) {
	num(uint64(len(list)))
	for _, s := range list {
		num(uint64(len(s)))
		h.Write([]byte(s))
	}
}
