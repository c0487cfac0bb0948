package registration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// CCM's names.
const (
	// SubjectPrefix is CCM's: entries are published on
	// SubjectPrefix.<cluster>.<protocol>.<service>.<address>.<instance>,
	// the address's dots turned into '_'.
	SubjectPrefix = "choria.ccm.registration.v1"
	// DefaultStream is CCM's default stream name (--registration, -R).
	DefaultStream = "REGISTRATION"
	// DefaultMaxAge is `registration init --max-age`'s default.
	DefaultMaxAge = time.Minute

	// Destinations, the agent configuration's registration key.
	DestinationNATS      = "nats"
	DestinationJetStream = "jetstream"
)

// Lookup bounds: a lookup that would return more fails and says so
// (variables for tests).
var (
	MaxEntries = 10000
	MaxBytes   = 16 << 20
)

const markerHeader = "Nats-Marker-Reason"

// Subject is the subject entry e is published on.
func Subject(e *Entry) string {
	return fmt.Sprintf("%s.%s.%s.%s.%s.%s", SubjectPrefix, e.Cluster, e.Protocol, e.Service, strings.ReplaceAll(e.Address, ".", "_"), e.InstanceID())
}

// FilterSubject is the filter matching cluster, protocol, service and
// address; "" and "*" are wildcards.
func FilterSubject(cluster, protocol, service, address string) (string, error) {
	tok := func(name, s string) (string, error) {
		if s == "" || s == "*" {
			return "*", nil
		}
		if strings.ContainsAny(s, "*> \t\r\n") || (name != "address" && strings.Contains(s, ".")) {
			return "", fmt.Errorf("registration filter %s %q: a name, an IP address or *", name, s)
		}
		return strings.ReplaceAll(s, ".", "_"), nil
	}
	var t [4]string
	var err error
	for i, p := range [][2]string{{"cluster", cluster}, {"protocol", protocol}, {"service", service}, {"address", address}} {
		if t[i], err = tok(p[0], p[1]); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%s.%s.%s.%s.%s.*", SubjectPrefix, t[0], t[1], t[2], t[3]), nil
}

// fromSubject rebuilds the identifying fields of a removed entry.
func fromSubject(subject string) *Entry {
	p := strings.Split(subject, ".")
	if len(p) < 9 {
		return &Entry{}
	}
	return &Entry{Cluster: p[4], Protocol: p[5], Service: p[6], Address: strings.ReplaceAll(p[7], "_", ".")}
}

// StreamConfig is CCM's stream configuration plus AllowDirect, which its
// lookups need and its `init` omits.
func StreamConfig(name string, replicas int, maxAge time.Duration) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:                   name,
		Subjects:               []string{SubjectPrefix + ".>"},
		Retention:              jetstream.LimitsPolicy,
		MaxMsgsPerSubject:      1,
		AllowMsgTTL:            true,
		Replicas:               replicas,
		AllowRollup:            true,
		MaxAge:                 maxAge,
		SubjectDeleteMarkerTTL: maxAge,
		DenyDelete:             true,
		AllowDirect:            true,
	}
}

// Init creates or updates the stream (`ccm registration init`). Updating a
// stream CCM created adds AllowDirect.
func Init(ctx context.Context, js jetstream.JetStream, name string, replicas int, maxAge time.Duration) (*jetstream.StreamInfo, error) {
	if replicas < 1 || replicas > 5 {
		return nil, fmt.Errorf("replicas must be between 1 and 5, not %d", replicas)
	}
	if maxAge < time.Second {
		return nil, fmt.Errorf("max-age %s: at least 1s (it is also how long removal markers are kept)", maxAge)
	}
	s, err := js.CreateOrUpdateStream(ctx, StreamConfig(name, replicas, maxAge))
	if err != nil {
		return nil, fmt.Errorf("could not create or update stream %s: %w", name, err)
	}
	return s.Info(ctx)
}

// Message is the NATS message announcing e: on the JetStream destination
// with CCM's headers (Nats-TTL, Nats-Rollup: sub, Nats-Expected-Stream);
// on the core NATS destination without (best effort, as CCM).
func Message(e *Entry, stream string, reliable bool) (*nats.Msg, error) {
	msg := nats.NewMsg(Subject(e))
	if reliable {
		if e.TTL != "" {
			msg.Header.Set("Nats-TTL", e.TTL)
		}
		msg.Header.Set("Nats-Rollup", "sub")
		if stream != "" {
			msg.Header.Set("Nats-Expected-Stream", stream)
		}
	}
	var err error
	msg.Data, err = json.Marshal(e)
	return msg, err
}

// Publisher announces entries; it is what the engine's
// register_when_stable and `ccm registration create` use.
type Publisher struct {
	NC     *nats.Conn
	JS     jetstream.JetStream // nil: core NATS, best effort
	Stream string
}

// Publish validates and announces e.
func (p *Publisher) Publish(ctx context.Context, e *Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	msg, err := Message(e, p.Stream, p.JS != nil)
	if err != nil {
		return err
	}
	if p.JS == nil {
		if err := p.NC.PublishMsg(msg); err != nil {
			return fmt.Errorf("publishing registration %s: %w", msg.Subject, err)
		}
		return p.NC.FlushWithContext(ctx)
	}
	if _, err := p.JS.PublishMsg(ctx, msg); err != nil {
		if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("publishing registration %s: no stream %s listens on %s.>; create it with `ccm registration init -R %s`: %w", msg.Subject, p.Stream, SubjectPrefix, p.Stream, err)
		}
		return fmt.Errorf("publishing registration %s to stream %s: %w", msg.Subject, p.Stream, err)
	}
	return nil
}

// Remove purges e's subject (`ccm registration rm`).
func Remove(ctx context.Context, js jetstream.JetStream, stream string, e *Entry) error {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("registration stream %s: %w", stream, err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(Subject(e))); err != nil {
		return fmt.Errorf("could not purge registration entry: %w", err)
	}
	return nil
}

// errFallback makes Lookup read through a consumer instead.
var errFallback = errors.New("direct get unavailable")

// LookupInfo says how a lookup was served, for diagnostics.
type LookupInfo struct {
	// Direct is true when a batched direct get answered.
	Direct bool
	// Note explains a fallback (a stream without AllowDirect), "" if none.
	Note string
}

// Lookup returns the live entries matching the filter (CCM's
// JetStreamLookup): the last message per subject, removal markers
// dropped, sorted by address then port. It fails when more than MaxEntries
// entries or MaxBytes bytes match.
func Lookup(ctx context.Context, js jetstream.JetStream, stream, cluster, protocol, service, address string) (Entries, LookupInfo, error) {
	filter, err := FilterSubject(cluster, protocol, service, address)
	if err != nil {
		return nil, LookupInfo{}, err
	}
	var info LookupInfo
	entries, err := lookupDirect(ctx, js, stream, filter)
	if errors.Is(err, errFallback) {
		info.Note = err.Error()
		entries, err = lookupConsumer(ctx, js, stream, filter)
	} else if err == nil {
		info.Direct = true
	}
	if err != nil {
		return nil, info, err
	}
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].Address != entries[j].Address {
			return entries[i].Address < entries[j].Address
		}
		return entries[i].Port < entries[j].Port
	})
	return entries, info, nil
}

func apiPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	}
	return jetstream.DefaultAPIPrefix
}

// lookupDirect is one batched direct get (multi_last) on the stream; it
// returns errFallback when the stream does not answer direct gets (no
// AllowDirect: CCM's stream) or the server refuses the size (more than
// 1024 subjects) or stops early on its byte limit.
func lookupDirect(ctx context.Context, js jetstream.JetStream, stream, filter string) (Entries, error) {
	nc := js.Conn()
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe() //nolint:errcheck
	req, _ := json.Marshal(map[string]any{"multi_last": []string{filter}, "max_bytes": MaxBytes})
	subj := apiPrefix(js) + "DIRECT.GET." + stream
	if err := nc.PublishRequest(subj, inbox, req); err != nil {
		return nil, err
	}
	var out Entries
	size := 0
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, fmt.Errorf("%w: stream %s does not answer direct gets (AllowDirect is off, as in streams CCM's `registration init` creates); read through a consumer instead. Run `ccm registration init -R %s` to enable it", errFallback, stream, stream)
		}
		if err != nil {
			return nil, fmt.Errorf("registration lookup on stream %s: %w", stream, err)
		}
		status := msg.Header.Get("Status")
		switch {
		case status == "404":
			return Entries{}, nil
		case status == "413":
			return nil, fmt.Errorf("%w: more than 1024 subjects match %s", errFallback, filter)
		case status == "204":
			if np, _ := strconv.Atoi(msg.Header.Get("Nats-Num-Pending")); np > 0 {
				return nil, fmt.Errorf("%w: the server stopped after %d entries with %d pending", errFallback, len(out), np)
			}
			return out, nil
		case status != "":
			return nil, fmt.Errorf("registration lookup on stream %s: %s %s", stream, status, msg.Header.Get("Description"))
		}
		if isMarker(msg.Header) {
			continue
		}
		if size += len(msg.Data); size > MaxBytes || len(out) >= MaxEntries {
			return nil, tooMany(stream, filter)
		}
		e := &Entry{}
		if err := json.Unmarshal(msg.Data, e); err != nil {
			return nil, fmt.Errorf("registration %s: could not decode entry: %w", msg.Header.Get("Nats-Subject"), err)
		}
		out = append(out, e)
	}
}

func tooMany(stream, filter string) error {
	return fmt.Errorf("registration lookup on stream %s: more than %d entries or %d bytes match %s; narrow the filter", stream, MaxEntries, MaxBytes, filter)
}

func isMarker(h nats.Header) bool {
	switch h.Get(markerHeader) {
	case "MaxAge", "Remove", "Purge":
		return true
	}
	return false
}

// lookupConsumer reads the last message per subject through an ordered
// (ephemeral, memory) consumer, which any stream serves.
func lookupConsumer(ctx context.Context, js jetstream.JetStream, stream, filter string) (Entries, error) {
	c, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return nil, streamErr("lookup", stream, err)
	}
	ci, err := c.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("registration lookup on stream %s: %w", stream, err)
	}
	if ci.NumPending == 0 {
		return Entries{}, nil
	}
	if ci.NumPending > uint64(MaxEntries)*2 {
		return nil, tooMany(stream, filter)
	}
	it, err := c.Messages()
	if err != nil {
		return nil, fmt.Errorf("registration lookup on stream %s: %w", stream, err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	var out Entries
	size := 0
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return nil, fmt.Errorf("registration lookup on stream %s: %w", stream, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return nil, err
		}
		if !isMarker(msg.Headers()) {
			if size += len(msg.Data()); size > MaxBytes || len(out) >= MaxEntries {
				return nil, tooMany(stream, filter)
			}
			e := &Entry{}
			if err := json.Unmarshal(msg.Data(), e); err != nil {
				return nil, fmt.Errorf("registration %s: could not decode entry: %w", msg.Subject(), err)
			}
			out = append(out, e)
		}
		if md.NumPending == 0 {
			return out, nil
		}
	}
}

func streamErr(op, stream string, err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("registration %s: there is no stream %s; create it with `ccm registration init -R %s`: %w", op, stream, stream, err)
	}
	return fmt.Errorf("registration %s on stream %s: %w", op, stream, err)
}

// Event is a change a watch sees.
type Event struct {
	Action string `json:"action"` // "register" or "remove"
	Entry  *Entry `json:"entry"`
	// Reason is why an entry was removed: MaxAge (its TTL or the stream's
	// max age expired), Remove or Purge (ccm registration rm).
	Reason string `json:"reason,omitempty"`
}

// ResyncEvery is how often a watch without a consumer re-reads the
// entries to notice removals.
var ResyncEvery = 5 * time.Second

// Watch streams the current entries matching the filter and then every
// change, until ctx ends. Like CCM's JetStreamWatch it reads through one
// ordered consumer, which reports removals with their reason; when the
// stream refuses another consumer (nats-server allows 1000 per stream by
// default, so the 1001st watcher fails in CCM) it falls back to watching
// without one (WatchWithoutConsumer) and says so through note.
func Watch(ctx context.Context, js jetstream.JetStream, stream, cluster, protocol, service, address string, note func(string)) (<-chan Event, error) {
	filter, err := FilterSubject(cluster, protocol, service, address)
	if err != nil {
		return nil, err
	}
	c, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if errors.Is(err, jetstream.ErrMaximumConsumersLimit) {
		if note != nil {
			note(fmt.Sprintf("stream %s refuses another consumer (%v); watching without one: live updates from NATS, removals noticed within %s", stream, err, ResyncEvery))
		}
		return WatchWithoutConsumer(ctx, js, stream, cluster, protocol, service, address)
	}
	if err != nil {
		return nil, streamErr("watch", stream, err)
	}
	events := make(chan Event, 100)
	cc, err := c.Consume(func(msg jetstream.Msg) {
		ev := Event{Action: "register"}
		if r := msg.Headers().Get(markerHeader); r != "" {
			ev = Event{Action: "remove", Entry: fromSubject(msg.Subject()), Reason: r}
		} else {
			e := &Entry{}
			if json.Unmarshal(msg.Data(), e) != nil {
				return
			}
			ev.Entry = e
		}
		select {
		case events <- ev:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return nil, streamErr("watch", stream, err)
	}
	go func() {
		<-ctx.Done()
		cc.Stop()
		<-cc.Closed()
		close(events)
	}()
	return events, nil
}

// WatchWithoutConsumer watches with no JetStream state on the server: the
// current entries from a lookup, live registrations from a core NATS
// subscription on the filter, and a lookup every ResyncEvery whose
// missing entries become removals with Reason "Gone" (the server does not
// publish its removal markers to subscribers, so the reason is unknown).
func WatchWithoutConsumer(ctx context.Context, js jetstream.JetStream, stream, cluster, protocol, service, address string) (<-chan Event, error) {
	filter, err := FilterSubject(cluster, protocol, service, address)
	if err != nil {
		return nil, err
	}
	live := make(chan *nats.Msg, 1024)
	sub, err := js.Conn().ChanSubscribe(filter, live)
	if err != nil {
		return nil, fmt.Errorf("registration watch: subscribing to %s: %w", filter, err)
	}
	first, _, err := Lookup(ctx, js, stream, cluster, protocol, service, address)
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	events := make(chan Event, 100)
	go func() {
		defer close(events)
		defer sub.Unsubscribe() //nolint:errcheck
		type seen struct {
			e  *Entry
			at time.Time
		}
		known := map[string]seen{}
		send := func(ev Event) bool {
			select {
			case events <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for _, e := range first {
			known[Subject(e)] = seen{e, time.Now()}
			if !send(Event{Action: "register", Entry: e}) {
				return
			}
		}
		tick := time.NewTicker(ResyncEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case m := <-live:
				e := &Entry{}
				if json.Unmarshal(m.Data, e) != nil {
					continue
				}
				known[m.Subject] = seen{e, time.Now()}
				if !send(Event{Action: "register", Entry: e}) {
					return
				}
			case <-tick.C:
				began := time.Now()
				lctx, cancel := context.WithTimeout(ctx, ResyncEvery)
				now, _, err := Lookup(lctx, js, stream, cluster, protocol, service, address)
				cancel()
				if err != nil {
					continue // a server restart, say: try again next tick
				}
				there := make(map[string]bool, len(now))
				for _, e := range now {
					there[Subject(e)] = true
				}
				for subj, k := range known {
					// An entry registered while the lookup ran may be
					// missing from it: only older ones are gone.
					if !there[subj] && k.at.Before(began) {
						delete(known, subj)
						if !send(Event{Action: "remove", Entry: k.e, Reason: "Gone"}) {
							return
						}
					}
				}
			}
		}
	}()
	return events, nil
}
