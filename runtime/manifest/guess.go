package manifest

import (
	"bytes"
	"slices"
)

// GuessTypes reads the resource types that src's ccm.resources list names
// from the text alone, in order of first use, without parsing it: the
// engine starts loading their plugins while Parse runs (a 2000-resource
// manifest takes about as long to parse as a plugin to load). It reads
// only the plain block style (`ccm:` at column 0, `resources:` under it,
// one `- TYPE:` line per item) and returns nil for anything else: JSON,
// flow style, quoted keys, resources_jet_file, and a ccm.plugins section
// or a merge key in ccm (a declared plugin may provide a type of the same
// name). A guess is
// never trusted: Parse decides what the manifest holds, and a wrong guess
// only costs the load of a plugin that is not used.
func GuessTypes(src []byte) []string {
	types, _ := GuessTypeCounts(src)
	return types
}

// GuessTypeCounts is GuessTypes with, for each type, how many resources
// its items seem to hold (the "- NAME:" entries at the first indentation
// inside an item, at least 1 per type): the host may load a plugin that a
// run barely uses more cheaply, so the early load announces about as
// many resources as the parse will find.
func GuessTypeCounts(src []byte) ([]string, []int) {
	var (
		types      []string
		counts     []int
		current    = -1 // index in types of the item being read
		entry      = -1 // indentation of the current item's "- " entries
		inCCM      bool
		ccmIndent  = -1 // indentation of the ccm section's keys
		listIndent = -1 // indentation of resources' "- " items, once seen
		inList     bool
	)
	for len(src) > 0 {
		var line []byte
		line, src, _ = bytes.Cut(src, []byte{'\n'})
		line = bytes.TrimRight(line, " \r")
		content := bytes.TrimLeft(line, " ")
		indent := len(line) - len(content)
		if len(content) == 0 || content[0] == '#' {
			continue
		}
		if content[0] == '\t' {
			return nil, nil // not YAML's indentation: unsure
		}
		if indent == 0 {
			if inCCM {
				break // the ccm section ended
			}
			if isKeyLine(content, "ccm") {
				inCCM = true
			} else if bytes.HasPrefix(content, []byte("ccm:")) || content[0] == '{' || content[0] == '[' || content[0] == '"' || content[0] == '\'' {
				return nil, nil // flow style, JSON or quoted keys
			}
			continue
		}
		if !inCCM {
			continue
		}
		if inList {
			if listIndent < 0 {
				if content[0] != '-' || indent < ccmIndent {
					return nil, nil
				}
				listIndent = indent
			}
			switch {
			case indent > listIndent:
				if current >= 0 && content[0] == '-' {
					if entry < 0 {
						entry = indent
					}
					if indent == entry {
						counts[current]++
					}
				}
				continue // inside an item
			case indent == listIndent && content[0] == '-':
				typ, ok := itemType(content)
				if !ok {
					return nil, nil
				}
				current = slices.Index(types, typ)
				if current < 0 {
					types, counts = append(types, typ), append(counts, 0)
					current = len(types) - 1
				}
				entry = -1
				continue
			}
			inList, current = false, -1 // the list ended: a key of ccm follows
		}
		if ccmIndent < 0 {
			ccmIndent = indent
		}
		if indent != ccmIndent {
			continue // inside another key of ccm
		}
		switch {
		case bytes.HasPrefix(content, []byte("plugins:")), bytes.HasPrefix(content, []byte("<<")):
			return nil, nil // declared plugins, or keys merged from elsewhere
		case isKeyLine(content, "resources"):
			inList = true
		case bytes.HasPrefix(content, []byte("resources:")):
			return nil, nil // a flow list, or something else on the key's line
		}
	}
	for i := range counts {
		counts[i] = max(counts[i], 1)
	}
	return types, counts
}

// isKeyLine reports whether content is "KEY:", alone or with a comment.
func isKeyLine(content []byte, key string) bool {
	rest, ok := bytes.CutPrefix(content, []byte(key+":"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) == 0 || rest[0] == '#'
}

// itemType reads TYPE from a "- TYPE:" line (what follows the colon is
// the item's body, or nothing).
func itemType(content []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(content, []byte("- "))
	if !ok {
		return "", false
	}
	rest = bytes.TrimLeft(rest, " ")
	key, after, ok := bytes.Cut(rest, []byte{':'})
	if !ok || (len(after) > 0 && after[0] != ' ') || !validType(string(key)) {
		return "", false
	}
	return string(key), true
}
