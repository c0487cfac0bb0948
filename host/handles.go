package host

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// Validated-resource handles (abi.PluginInfo.Handles).
//
// A plugin that sets Handles answers each valid resource of ccm_validate
// with a handle to what it kept of it, and applies a request naming that
// handle without its properties. A handle means something only to the
// instance that returned it, so the host never lets it reach another:
//
//   - Each instance gets a serial, unique in the process and never reused
//     (instanceSerials). Validate hands the engine a token, the serial in
//     the high 32 bits and the guest's handle in the low ones, and only for
//     a plugin whose description set Handles.
//   - A ccm_apply or ccm_apply_batch request with a token is encoded for the
//     instance that serves the call, once that instance is chosen (under
//     the plugin's lock, after any discard): the guest gets its handle and
//     no properties when the token's serial is that instance's; otherwise
//     (the instance was discarded after a trap, a timeout or a limit, or
//     another scope's instance serves the call) the handle is dropped and
//     the properties go in full, as for any plugin.
//   - Every other export, and every plugin without Handles, gets requests
//     with no handle: exactly what it got before handles existed.
//
// The engine sends a token only for a resource whose properties are exactly
// the ones validated, and at most once.

// instanceSerials numbers instances across every Host of the process. 0 is
// never a serial; past 2^31 - 1 instances no token is handed out.
var instanceSerials atomic.Uint64

const (
	maxSerial = 1<<31 - 1
	handleMax = 1<<32 - 1
)

// token is the handle h of the instance with serial, as the engine holds it,
// or 0 when it cannot be one.
func token(serial uint64, h int64) int64 {
	if serial == 0 || serial > maxSerial || h <= 0 || h > handleMax {
		return 0
	}
	return int64(serial)<<32 | h
}

// tokens replaces the guests' handles in resps by tokens of the instance
// with serial (0: the plugin keeps no handles; every handle is dropped), and
// returns how many it handed out.
func tokens(resps []abi.ValidateResponse, serial uint64) int {
	n := 0
	for i := range resps {
		if resps[i].Handle != 0 {
			resps[i].Handle = token(serial, resps[i].Handle)
		}
		if resps[i].Handle != 0 {
			n++
		}
	}
	return n
}

// forInstance is in as the instance with serial receives it: requests whose
// token is that instance's carry the guest's handle and no properties; every
// other token is dropped (serial 0: all of them). in itself is not changed.
// sent is how many handles it carries.
func forInstance(in any, serial uint64) (out any, sent int) {
	switch v := in.(type) {
	case abi.Request:
		r := requestFor(v, serial)
		if r.Handle != 0 {
			sent++
		}
		return r, sent
	case abi.BatchRequest:
		if !hasTokens(v.Requests) {
			return v, 0
		}
		reqs := make([]abi.Request, len(v.Requests))
		for i, r := range v.Requests {
			reqs[i] = requestFor(r, serial)
			if reqs[i].Handle != 0 {
				sent++
			}
		}
		v.Requests = reqs
		return v, sent
	}
	return in, 0
}

// hasTokens reports whether any request carries a token.
func hasTokens(reqs []abi.Request) bool {
	for i := range reqs {
		if reqs[i].Handle != 0 {
			return true
		}
	}
	return false
}

func requestFor(r abi.Request, serial uint64) abi.Request {
	if r.Handle == 0 {
		return r
	}
	if serial != 0 && uint64(r.Handle)>>32 == serial {
		r.Handle &= handleMax
		r.Properties = nil
		return r
	}
	r.Handle = 0
	return r
}

// handOut turns the guest's handles in resps, answered to the validation
// call st of p, into tokens of the instance that served it (none for a
// plugin that keeps no handles, or when that instance is gone), and counts
// them as kept by it until sent.
func (p *plugin) handOut(st *callState, resps []abi.ValidateResponse) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var in *instance
	for _, l := range p.live {
		if l.serial == st.served {
			in = l
		}
	}
	if in == nil || p.info == nil || !p.info.Handles {
		tokens(resps, 0)
		return
	}
	in.kept += tokens(resps, in.serial)
}

// forgetAt is how many unsent handles an instance may keep across runs
// before ForgetHandles discards it: a few (a deferred template's load-time
// validation leaves one per resource, every run) are not worth a new
// instance each run; thousands are (a health-check-only run of a large
// manifest leaves all of them).
var forgetAt = 1024

// ForgetHandles discards every instance keeping at least forgetAt validated
// resources whose handles were never sent (their resources were skipped,
// failed before their apply, ran in a mode that does not apply, or were
// validated again after their deferred templates were expanded): a
// long-lived host (ccm agent, ensure api pipe) would otherwise carry them
// from run to run until the guest's bound stops it answering handles. The
// next call of that scope gets a fresh instance; tokens of the discarded
// one still in a caller's hands are dropped as after any recycle, so this
// is safe while other runs use the host. The engine calls it when a run
// ends.
func (h *Host) ForgetHandles(ctx context.Context) {
	h.mu.Lock()
	plugins := make([]*plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		plugins = append(plugins, p)
	}
	h.mu.Unlock()
	for _, p := range plugins {
		p.mu.Lock()
		for _, in := range slices.Clone(p.live) {
			if in.kept >= forgetAt {
				p.discard(ctx, in)
			}
		}
		p.mu.Unlock()
	}
}
