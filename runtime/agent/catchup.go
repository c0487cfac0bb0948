package agent

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/nats-io/nats.go/jetstream"
)

// applied records the bundle digest manifest's last run used ("" when
// it used none: a local manifest, or nothing could be fetched).
func (a *Agent) applied(manifest, digest string) {
	a.dmu.Lock()
	defer a.dmu.Unlock()
	if a.digests == nil {
		a.digests = map[string]string{}
	}
	a.digests[manifest] = digest
}

// catchUp runs after each reconnection: a change of an obj:// source
// published while the agent was not connected was not heard, so each
// object's digest is read (one request per source, no consumer) and
// compared with the bundle the source's last run used; a different one
// wakes a run. A missing object or bucket wakes nothing.
func (a *Agent) catchUp(ctx context.Context) {
	var js jetstream.JetStream
	for _, m := range a.Manifests {
		if !strings.HasPrefix(m, "obj://") || ctx.Err() != nil {
			continue
		}
		ref, err := source.Parse(m)
		if err != nil {
			continue
		}
		if js == nil {
			if js, err = jetstream.New(a.Conn); err != nil {
				return
			}
		}
		cctx, cancel := context.WithTimeout(ctx, publishDeadline)
		var info *jetstream.ObjectInfo
		obs, err := js.ObjectStore(cctx, ref.Bucket)
		if err == nil {
			info, err = obs.GetInfo(cctx, ref.Key)
		}
		cancel()
		if err != nil {
			if !errors.Is(err, jetstream.ErrObjectNotFound) && !errors.Is(err, jetstream.ErrBucketNotFound) {
				a.logf("after reconnecting: %s: %v; the next interval run will catch up", m, err)
			}
			continue
		}
		raw, err := jetstream.DecodeObjectDigest(info.Digest)
		if err != nil {
			continue
		}
		a.dmu.Lock()
		last := a.digests[m]
		a.dmu.Unlock()
		if hex.EncodeToString(raw) == last {
			continue
		}
		a.logf("after reconnecting: %s changed while NATS was unreachable", m)
		select {
		case a.wake <- m:
		default: // a run is already due: coalesce
		}
	}
}
