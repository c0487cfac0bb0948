package manifest

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// registrations reads a register_when_stable list (docs/registration.md):
// maps with CCM's keys, cluster, service, protocol, address and priority
// required. Values stay raw: templates in them are expanded when the
// resource is stable, and the entry is validated then.
func (p *parser) registrations(n *yaml.Node) ([]map[string]any, error) {
	return decodeList(p, n, "entries such as - {cluster: prod, service: web, protocol: http, address: 10.0.0.1, port: 80, priority: 10}", p.registration)
}

func (p *parser) registration(n *yaml.Node) (map[string]any, error) {
	n, err := p.d.resolve(n)
	if err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: an entry is a map with cluster, service, protocol, address, port, priority, ttl and annotations", ErrInvalid)}
	}
	pairs, err := p.d.pairs(n)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(pairs))
	for _, kv := range pairs {
		if !slices.Contains(registrationKeys, kv.key) {
			return nil, under(&valueError{line: kv.keyN.Line, err: unknownKey(kv.key, registrationKeys)}, kv.key)
		}
		if out[kv.key], err = p.d.value(kv.value); err != nil {
			return nil, under(err, kv.key)
		}
	}
	for _, k := range []string{"cluster", "service", "protocol", "address", "priority"} {
		if v, ok := out[k]; !ok || v == nil || v == "" {
			return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: %s is required", ErrInvalid, k)}
		}
	}
	return out, nil
}
