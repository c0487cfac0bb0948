package manifest

import (
	"fmt"
)

// jetList is the subject of a bare resource list in errors: the list is
// the whole file, so the index alone locates an item.
const jetList = "resources"

// ParseResources decodes a bare resource list, the output of a
// ccm.resources_jet_file template, with the rules of ccm.resources: both
// shapes, `defaults`, strict keys, duplicate check. file names the list in
// errors ("web.jet:3: resources[0].exec: ..."), and lines count in src,
// i.e. in the rendered output. An empty list is ErrNoResources.
func ParseResources(src []byte, file string) ([]Resource, error) {
	root, err := parseYAML(src, file)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, &Error{File: file, Err: fmt.Errorf("%w: the resource list is empty; the template must output a list such as - file: [...]", ErrNoResources)}
	}
	p := &parser{file: file, d: newDecoder(len(src)), list: jetList}
	rs, err := p.resources(root)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, &Error{File: file, Line: root.Line, Subject: jetList, Err: fmt.Errorf("%w: the resource list is empty; declare at least one resource", ErrNoResources)}
	}
	if err := checkDuplicates(file, rs); err != nil {
		return nil, err
	}
	return rs, nil
}
