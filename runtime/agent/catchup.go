package agent

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/nats-io/nats.go/jetstream"
)

// catchUpTries bounds how often CatchUp asks the server before it runs
// anyway: a restarted server may take a moment to recover its streams.
const (
	catchUpTries = 5
	catchUpPause = time.Second
)

// CatchUp is for the agent's NATS connection's ReconnectHandler, while
// Loop runs. A change wake-up is a core NATS message, not stored, so an
// agent that was cut off may have missed one; it may also have run without
// reaching the object store, or run and not been able to publish the
// result. For every obj:// manifest CatchUp compares the bundle digest of
// the node's last stored result with the object's current digest and wakes
// Loop (reason "changed: SOURCE") when they differ, when there is no
// stored result, or when the last one is of another manifest. When the
// server does not answer after a few tries it wakes Loop anyway: a run too
// many costs less than a node left behind. CatchUp returns at once; the
// work is done in a goroutine, bounded by ctx.
//
// The check is two direct gets per node, no consumer: a thousand agents
// reconnecting at once cost the server a few thousand requests, and only
// the nodes behind run.
func (a *Agent) CatchUp(ctx context.Context) {
	if a.JS == nil {
		return
	}
	wake := a.wake
	if wake == nil {
		return // Loop has not started: its first run is still to come
	}
	go func() {
		for _, m := range a.Manifests {
			if !strings.HasPrefix(m, "obj://") {
				continue
			}
			behind := true
			for try := range catchUpTries {
				b, err := a.behind(ctx, m)
				if err == nil {
					behind = b
					break
				}
				if try == catchUpTries-1 {
					a.logf("after reconnecting, could not tell whether %s changed: %v; running it", m, err)
					break
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(catchUpPause):
				}
			}
			if !behind {
				continue
			}
			a.logf("after reconnecting: the last published result of %s is not of its current bundle; running it", m)
			select {
			case wake <- m:
			default: // a run is already due: coalesce
			}
		}
	}()
}

// behind tells whether the node's last stored result is not a run of the
// object m names as it is now.
func (a *Agent) behind(ctx context.Context, m string) (bool, error) {
	ref, err := source.Parse(m)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, publishDeadline)
	defer cancel()
	obs, err := a.JS.ObjectStore(ctx, ref.Bucket)
	if err != nil {
		return false, err
	}
	info, err := obs.GetInfo(ctx, ref.Key)
	if err != nil {
		return false, err
	}
	current := objectDigestHex(info.Digest)
	st, err := a.JS.Stream(ctx, ResultStream)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return true, nil
		}
		return false, err
	}
	msg, err := st.GetLastMsgForSubject(ctx, ResultSubject(a.Node))
	if err != nil {
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return true, nil
		}
		return false, err
	}
	var r Result
	if json.Unmarshal(msg.Data, &r) != nil || r.Manifest != m {
		return true, nil
	}
	return current == "" || r.Digest != current, nil
}

// objectDigestHex turns an object store digest ("SHA-256=" and base64url)
// into the hex sha256 bundles are named by; "" when it is not one.
func objectDigestHex(d string) string {
	b64, ok := strings.CutPrefix(d, "SHA-256=")
	if !ok {
		return ""
	}
	b, err := base64.URLEncoding.DecodeString(b64)
	if err != nil || len(b) != 32 {
		return ""
	}
	return hex.EncodeToString(b)
}
