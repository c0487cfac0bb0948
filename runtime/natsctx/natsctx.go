// Package natsctx connects to NATS the way the nats CLI does: from a
// context file (docs/remote.md, "NATS contexts").
//
// A context is named (--context NAME, else $NATS_CONTEXT, else CCM's
// default "CCM") and read from $XDG_CONFIG_HOME/nats/context/NAME.json
// (~/.config when XDG_CONFIG_HOME is unset), or given as an absolute path
// to such a file. When the default context has no file, ccm connects to
// $NATS_URL or nats://127.0.0.1:4222 without credentials; a context named
// explicitly must exist.
package natsctx

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultName is CCM's default context name (its --context default).
const DefaultName = "CCM"

// Context holds the fields of a nats CLI context file ccm uses.
type Context struct {
	URL         string `json:"url"`
	User        string `json:"user"`
	Password    string `json:"password"`
	Creds       string `json:"creds"`
	NKey        string `json:"nkey"`
	Token       string `json:"token"`
	Cert        string `json:"cert"`
	Key         string `json:"key"`
	CA          string `json:"ca"`
	TLSFirst    bool   `json:"tls_first"`
	JSDomain    string `json:"jetstream_domain"`
	JSAPIPrefix string `json:"jetstream_api_prefix"`
	InboxPrefix string `json:"inbox_prefix"`

	// Source is the file read, "" for the built-in default.
	Source string `json:"-"`
	// Timeout bounds connecting; zero is 5 s.
	Timeout time.Duration `json:"-"`
}

// Resolve finds the context to use: name as given (a flag), else
// $NATS_CONTEXT, else DefaultName.
func Resolve(name string) (*Context, error) {
	explicit := name != ""
	if name == "" {
		name = os.Getenv("NATS_CONTEXT")
		explicit = name != ""
	}
	if name == "" {
		name = DefaultName
	}
	if name == DefaultName {
		explicit = false // CCM's default, whether or not spelled out
	}
	file := name
	if !filepath.IsAbs(name) {
		if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			return nil, fmt.Errorf("nats context %q: a name may not contain a path separator; give a name or an absolute path to a context file", name)
		}
		dir := os.Getenv("XDG_CONFIG_HOME")
		if dir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("nats context %q: %w", name, err)
			}
			dir = filepath.Join(home, ".config")
		}
		file = filepath.Join(dir, "nats", "context", name+".json")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !explicit {
			url := os.Getenv("NATS_URL")
			if url == "" {
				url = "nats://127.0.0.1:4222"
			}
			return &Context{URL: url}, nil
		}
		return nil, fmt.Errorf("nats context %q: %w; create it with `nats context save %s --server URL` or give --context", name, err, name)
	}
	c := &Context{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("nats context %s: %w", file, err)
	}
	c.Source = file
	if c.URL == "" {
		c.URL = nats.DefaultURL
	}
	return c, nil
}

// Options are the nats.go options for c.
func (c *Context) Options() ([]nats.Option, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	opts := []nats.Option{nats.Name("ccm"), nats.Timeout(timeout), nats.MaxReconnects(2)}
	if c.User != "" {
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	}
	if c.Creds != "" {
		opts = append(opts, nats.UserCredentials(expand(c.Creds)))
	}
	if c.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(expand(c.NKey))
		if err != nil {
			return nil, fmt.Errorf("nats context %s: nkey: %w", c.Source, err)
		}
		opts = append(opts, o)
	}
	if c.Token != "" {
		opts = append(opts, nats.Token(c.Token))
	}
	if c.Cert != "" && c.Key != "" {
		opts = append(opts, nats.ClientCert(expand(c.Cert), expand(c.Key)))
	}
	if c.CA != "" {
		opts = append(opts, nats.RootCAs(expand(c.CA)))
	}
	if c.TLSFirst {
		opts = append(opts, nats.TLSHandshakeFirst())
	}
	if c.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(c.InboxPrefix))
	}
	return opts, nil
}

// Connect connects with c and returns the connection and its JetStream
// context (domain or API prefix from c).
func (c *Context) Connect() (*nats.Conn, jetstream.JetStream, error) {
	opts, err := c.Options()
	if err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("nats %s%s: %w", redact(c.URL), c.from(), err)
	}
	var js jetstream.JetStream
	switch {
	case c.JSDomain != "":
		js, err = jetstream.NewWithDomain(nc, c.JSDomain)
	case c.JSAPIPrefix != "":
		js, err = jetstream.NewWithAPIPrefix(nc, c.JSAPIPrefix)
	default:
		js, err = jetstream.New(nc)
	}
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats %s%s: jetstream: %w", redact(c.URL), c.from(), err)
	}
	return nc, js, nil
}

func (c *Context) from() string {
	if c.Source == "" {
		return " (default context: no CCM context file)"
	}
	return " (context " + c.Source + ")"
}

// expand resolves ~ in a context's file paths, as the nats CLI does.
func expand(p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	return p
}

// redact hides credentials in a server URL list.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if s := strings.Index(p, "://"); s >= 0 && s < at {
				parts[i] = p[:s+3] + "REDACTED" + p[at:]
			}
		}
	}
	return strings.Join(parts, ",")
}
