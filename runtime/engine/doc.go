// Package engine runs manifests: it loads a manifest (parse, resolve data,
// expand templates, validate every resource through its plugin), then runs
// one loop over the resources in declaration order — build, gate (control,
// require, subscribe), call the plugin, run health checks, record the event.
//
// The apply resource re-enters the same loop for a child manifest with a
// scope (directory, depth, noop, health-check-only, grants, allow_apply)
// that is passed down by value and only ever narrowed, so the parent's scope
// is intact on every path out of a child, panics included.
//
// The root scope is built in one place (rootScope, scope.go) from Options
// for Run, Render and Ensure; Status (ccm status) reads one resource's state
// through the same Options. A scope's noop and health-check-only become the
// caller's trust.Mode (scope.mode), the one carrier of the mode to the
// host, which derives the plugin request's flags from it.
//
// Plugins declared in a manifest's ccm.plugins are registered when it loads,
// before any of its resources runs, and enter a type table (plugins.go) that
// its child manifests inherit and its parent and siblings never see; a
// resource's type resolves through that table to a plugin id, and to the
// type name itself (built-in or operator-installed) when it holds none.
//
// Errors that belong to one resource (a failing control expression, a
// deferred template, an unknown requirement, a plugin trap) become a failed
// event for that type#name; only an unloadable manifest, or fail_on_error
// after a failure, stops a manifest.
//
// The engine talks to plugins only through hostapi.Plugins; it must not
// import package host or any plugin.
package engine
