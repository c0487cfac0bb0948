package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Heartbeats go to HeartbeatSubject(node) in HeartbeatStream, which keeps
// only the newest of each node, for HeartbeatTTL: a node that stops
// beating disappears from the stream.
const (
	HeartbeatStream  = "CCM_HEARTBEATS"
	HeartbeatPrefix  = "ccm.agent.heartbeat."
	HeartbeatTTL     = 5 * time.Minute
	DefaultHeartbeat = time.Minute
)

// HeartbeatSubject is the subject of node's heartbeats.
func HeartbeatSubject(node string) string { return HeartbeatPrefix + node }

// Heartbeat is what a node says it is alive with.
type Heartbeat struct {
	Node      string    `json:"node"`
	Time      time.Time `json:"time"`
	Manifests []string  `json:"manifests"`
}

func ensureHeartbeats(ctx context.Context, js jetstream.JetStream) error {
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:              HeartbeatStream,
		Description:       "ccm agent heartbeats, the newest per node",
		Subjects:          []string{HeartbeatPrefix + ">"},
		MaxMsgsPerSubject: 1,
		MaxAge:            HeartbeatTTL,
		AllowDirect:       true,
		Discard:           jetstream.DiscardOld,
	})
	if err != nil {
		return fmt.Errorf("heartbeat stream %s: %w", HeartbeatStream, err)
	}
	return nil
}

// beat publishes a heartbeat every period until ctx ends; failures are
// skipped silently (the next beat tries again, and a missing heartbeat is
// what the fleet sees).
func (a *Agent) beat(ctx context.Context, period time.Duration) {
	ensured := false
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if a.Conn == nil || a.Conn.IsConnected() {
			pctx, cancel := context.WithTimeout(ctx, publishDeadline)
			if !ensured {
				ensured = ensureHeartbeats(pctx, a.JS) == nil
			}
			if ensured {
				b, _ := json.Marshal(Heartbeat{Node: a.Node, Time: time.Now().UTC(), Manifests: a.Manifests})
				_, _ = a.JS.Publish(pctx, HeartbeatSubject(a.Node), b)
			}
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// LastSeen returns each node's newest heartbeat time (nodes whose
// heartbeats expired are absent); an empty map when no agent beats.
func LastSeen(ctx context.Context, js jetstream.JetStream) (map[string]time.Time, error) {
	seen := map[string]time.Time{}
	st, err := js.Stream(ctx, HeartbeatStream)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return seen, nil
		}
		return nil, fmt.Errorf("heartbeat stream %s: %w", HeartbeatStream, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(HeartbeatPrefix+">"))
	if err != nil {
		return nil, fmt.Errorf("heartbeat stream %s: %w", HeartbeatStream, err)
	}
	for s := range info.State.Subjects {
		msg, err := st.GetLastMsgForSubject(ctx, s)
		if err != nil {
			continue // expired since the listing
		}
		var hb Heartbeat
		if json.Unmarshal(msg.Data, &hb) == nil {
			seen[strings.TrimPrefix(s, HeartbeatPrefix)] = hb.Time
		}
	}
	return seen, nil
}
