// Package agent converges a host continuously: it applies its manifest
// sources on an interval with jitter and whenever an obj:// source changes,
// publishes every run's result to NATS JetStream, and stops cleanly when its
// context ends (docs/agent.md).
//
// The agent only schedules and reports: each run goes through a RunFunc that
// the caller builds from the engine, with the node's own grants, so the
// agent adds no way to touch the host.
package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// CCM's defaults and bounds for the agent (its agent/config.go).
const (
	DefaultInterval = 5 * time.Minute
	MinInterval     = 30 * time.Second
	DefaultCacheDir = "/etc/choria/ccm/source"
	DefaultContext  = "CCM"
)

// Config is the agent's configuration file: CCM's documented keys (its
// build/agent.yaml) and ours, marked below.
type Config struct {
	Interval            string   `yaml:"interval"`
	HealthCheckInterval string   `yaml:"health_check_interval"`
	Manifests           []string `yaml:"manifests"`
	ExternalDataURL     string   `yaml:"external_data_url"`
	CacheDir            string   `yaml:"cache_dir"`
	MonitorPort         int      `yaml:"monitor_port"`
	LogLevel            string   `yaml:"log_level"`
	NatsContext         string   `yaml:"nats_context"`
	Registration        string   `yaml:"registration"`

	// Ours.
	Jitter      string `yaml:"jitter"`       // up to this much is added to each wait; default interval/10
	Grants      string `yaml:"grants"`       // grant file confining every run (as ccm apply --grants)
	Node        string `yaml:"node"`         // node identity in results; default the host name
	TrustedKeys string `yaml:"trusted_keys"` // signer public keys every remote bundle must be signed by
	Results     *bool  `yaml:"results"`      // publish results to JetStream; default true
	Heartbeat   string `yaml:"heartbeat"`    // heartbeat period; default 1m, "0" for none
	// RegistrationStream is the stream register_when_stable publishes to
	// and registrations() reads; default REGISTRATION (CCM's).
	RegistrationStream string `yaml:"registration_stream"`
	// PollInterval: how often http(s) manifests are polled for a change
	// (conditional GET); default 30s, "0" for never.
	PollInterval string `yaml:"poll_interval"`
	// FactsInterval: facts are gathered again only when older than this;
	// default 2m, "0" for every run.
	FactsInterval string `yaml:"facts_interval"`
	// ResultsQueue: results kept while NATS is down; default 100.
	ResultsQueue int `yaml:"results_queue"`
	// LastGood: use the last-good copy of an unreachable source; default
	// true.
	LastGood *bool `yaml:"last_good"`

	IntervalDuration    time.Duration `yaml:"-"`
	JitterDuration      time.Duration `yaml:"-"`
	HealthCheckDuration time.Duration `yaml:"-"`
	HeartbeatDuration   time.Duration `yaml:"-"`
	PollDuration        time.Duration `yaml:"-"`
	FactsDuration       time.Duration `yaml:"-"`
}

// Defaults of our keys, CCM's own bounds: its agent polls remote sources
// every 30s and gathers facts at most every 2m (docs/agent.md).
const (
	DefaultPoll  = 30 * time.Second
	DefaultFacts = 2 * time.Minute
)

// ParseConfig reads a configuration file's bytes. Unknown keys are refused
// so that a misspelt key is not silently ignored.
func ParseConfig(src []byte, file string) (*Config, error) {
	c := &Config{
		IntervalDuration:   DefaultInterval,
		CacheDir:           DefaultCacheDir,
		LogLevel:           "info",
		NatsContext:        DefaultContext,
		HeartbeatDuration:  DefaultHeartbeat,
		PollDuration:       DefaultPoll,
		FactsDuration:      DefaultFacts,
		ResultsQueue:       DefaultQueue,
		RegistrationStream: "REGISTRATION",
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("agent config %s: %w", file, err)
	}
	var err error
	if c.Interval != "" {
		if c.IntervalDuration, err = time.ParseDuration(c.Interval); err != nil {
			return nil, fmt.Errorf("agent config %s: interval: %w", file, err)
		}
	}
	if c.IntervalDuration < MinInterval {
		return nil, fmt.Errorf("agent config %s: interval %s is below the minimum of %s", file, c.IntervalDuration, MinInterval)
	}
	c.JitterDuration = c.IntervalDuration / 10
	if c.Jitter != "" {
		if c.JitterDuration, err = time.ParseDuration(c.Jitter); err != nil || c.JitterDuration < 0 {
			return nil, fmt.Errorf("agent config %s: jitter %q: want a duration such as 30s", file, c.Jitter)
		}
	}
	if c.HealthCheckInterval != "" {
		if c.HealthCheckDuration, err = time.ParseDuration(c.HealthCheckInterval); err != nil {
			return nil, fmt.Errorf("agent config %s: health_check_interval: %w", file, err)
		}
	}
	if c.Heartbeat != "" {
		if c.HeartbeatDuration, err = time.ParseDuration(c.Heartbeat); err != nil || c.HeartbeatDuration < 0 || (c.HeartbeatDuration > 0 && c.HeartbeatDuration < time.Second) {
			return nil, fmt.Errorf("agent config %s: heartbeat %q: want a duration of at least 1s, or 0 for none", file, c.Heartbeat)
		}
	}
	if c.PollInterval != "" {
		if c.PollDuration, err = time.ParseDuration(c.PollInterval); err != nil || c.PollDuration < 0 || (c.PollDuration > 0 && c.PollDuration < time.Second) {
			return nil, fmt.Errorf("agent config %s: poll_interval %q: want a duration of at least 1s, or 0 for no polling", file, c.PollInterval)
		}
	}
	if c.FactsInterval != "" {
		if c.FactsDuration, err = time.ParseDuration(c.FactsInterval); err != nil || c.FactsDuration < 0 {
			return nil, fmt.Errorf("agent config %s: facts_interval %q: want a duration such as 10m, or 0 to gather facts for every run", file, c.FactsInterval)
		}
	}
	if c.ResultsQueue < 1 {
		return nil, fmt.Errorf("agent config %s: results_queue %d: want at least 1", file, c.ResultsQueue)
	}
	if len(c.Manifests) == 0 {
		return nil, fmt.Errorf("agent config %s: manifests: at least one manifest source is needed (a path, https:// or obj://BUCKET/KEY)", file)
	}
	if c.CacheDir == "" {
		return nil, fmt.Errorf("agent config %s: cache_dir must be set", file)
	}
	switch c.Registration {
	case "", "nats", "jetstream":
	default:
		return nil, fmt.Errorf("agent config %s: registration %q: want nats or jetstream", file, c.Registration)
	}
	if c.RegistrationStream == "" || strings.ContainsAny(c.RegistrationStream, ".*> \t") {
		return nil, fmt.Errorf("agent config %s: registration_stream %q: a JetStream stream name (no '.', '*', '>' or spaces)", file, c.RegistrationStream)
	}
	return c, nil
}

// UseLastGood reports whether an unreachable source falls back to its
// last-good copy (default true).
func (c *Config) UseLastGood() bool { return c.LastGood == nil || *c.LastGood }

// PublishResults reports whether results go to JetStream (default true).
func (c *Config) PublishResults() bool { return c.Results == nil || *c.Results }
