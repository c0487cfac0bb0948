// Package manifest decodes one CCM-compatible manifest document (YAML or
// JSON) into a Document: top-level sections, and the resource list with
// `defaults` applied and common properties split from type-specific ones.
//
// It checks shape only: allowed keys (rejected with their path, unlike CCM,
// which silently drops them), value kinds, `type#name` references, health
// check rules, duplicate resources. It never expands templates, never knows
// which resource types exist (the engine's registry does) and never touches
// the OS.
//
// Values are decoded into plain Go types only (map[string]any, []any,
// string, int, float64, bool, nil) so that every later stage (templates,
// JSON for plugins) sees one representation. Strings are kept byte-exact:
// CCM re-serialises resources and breaks on multi-line strings; this
// package never re-serialises anything.
//
// Decisions where CCM is silent, buggy or self-contradictory
// (recorded in docs/decisions.md):
//
//   - unknown keys are rejected at top level, in ccm, hierarchy, control
//     and health checks, with the closest allowed key suggested;
//     type-specific properties are checked later against the type's schema;
//   - a duplicate type#name in one document is an error naming both lines,
//     and so is an alias equal to another resource's name or alias of the
//     same type (require/subscribe could not tell them apart);
//   - `control` from defaults and from the resource merge per key (CCM's
//     behaviour); every other property from the resource replaces the
//     default wholesale, lists and maps included;
//   - require and subscribe must be lists; a ref's type may also hold
//     digits and '_' (any valid type key) so that third-party types can be
//     referenced;
//   - health checks: tries 1, try_sleep 1s (the documented value; CCM's
//     binary uses 0), format must match the field used, name defaults to
//     the base name of the check program;
//   - scalar names, aliases and control expressions written as numbers or
//     booleans (`if: true`) keep the text the author wrote;
//   - YAML timestamps stay strings, application tags (!vault) keep their
//     text, merge keys (<<) and anchors work, more than one document in a
//     file is an error; register_when_stable entries are kept raw (their
//     templates are expanded when the resource is stable), their keys
//     checked and cluster, service, protocol, address and priority
//     required;
//   - data annotations are read from the comment block directly above a
//     key of `data` (yaml.v3 head comments: a blank line followed by a
//     value ends the block); comments on the key's line, in lists, behind
//     aliases or merge keys, and under `overrides` are not annotations.
//
// Errors read "FILE:LINE: subject: problem" and are *Error values wrapping a
// sentinel from errors.go where one applies.
//
// It must not import other runtime packages, host/ or plugins/: it is the
// bottom of the load pipeline.
package manifest
