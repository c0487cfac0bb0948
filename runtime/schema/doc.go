// Package schema validates a resource's properties against the JSON Schema
// a plugin declares in ccm_describe (abi.PluginInfo.PropertiesSchema). A
// schema is compiled once per plugin and then validates many resources.
//
// It implements the subset of JSON Schema that describes resource
// properties, not the whole standard (docs/decisions.md says why):
//
//	type, properties, required, additionalProperties, enum, const, items,
//	minItems, maxItems, pattern, minLength, maxLength, minimum, maximum,
//	exclusiveMinimum, exclusiveMaximum, anyOf, oneOf, allOf, and the
//	boolean schemas true and false.
//
// Annotation keywords (title, description, default, examples, format,
// $schema, $id, $comment, deprecated, readOnly, writeOnly) are accepted and
// ignored. Any other keyword ($ref, patternProperties, if, …) makes Compile
// fail, so a plugin author never believes a constraint is enforced when it
// is not. Patterns are Go (RE2) regular expressions, which cannot backtrack.
//
// Validate reports every problem, each naming the property it concerns
// (`property "mode": must match the pattern ^[0-7]{3,4}$`), and never
// prints a property's value: values often hold secrets.
//
// The package is pure: it touches no OS state, and of ccm it imports only
// internal/suggest (standard library only) for "did you mean" hints on
// unknown property names.
package schema
