package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Latest returns the latest published result of every node, sorted by
// node: one direct get per node on the results stream, no consumer.
func Latest(ctx context.Context, js jetstream.JetStream) ([]Result, error) {
	st, err := js.Stream(ctx, ResultStream)
	if err != nil {
		return nil, fmt.Errorf("results stream %s: %w (no agent has published yet?)", ResultStream, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(ResultPrefix+">"))
	if err != nil {
		return nil, fmt.Errorf("results stream %s: %w", ResultStream, err)
	}
	subjects := make([]string, 0, len(info.State.Subjects))
	for s := range info.State.Subjects {
		subjects = append(subjects, s)
	}
	sort.Strings(subjects)
	out := make([]Result, 0, len(subjects))
	for _, s := range subjects {
		msg, err := st.GetLastMsgForSubject(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("last result on %s: %w", s, err)
		}
		var r Result
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			return nil, fmt.Errorf("last result on %s: %w", s, err)
		}
		if r.Node == "" {
			r.Node = strings.TrimPrefix(s, ResultPrefix)
		}
		out = append(out, r)
	}
	return out, nil
}
