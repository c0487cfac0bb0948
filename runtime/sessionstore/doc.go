// Package sessionstore keeps a session of TransactionEvents in a directory,
// so that several `ccm ensure` processes of one shell script share
// require/subscribe state and one report (docs/shell.md).
//
// The store holds one JSON file per event, named <event_id>.event: a
// session-start event (protocol io.choria.ccm.v1.session.start) written by
// New, then one TransactionEvent per ensured resource. Each file is written
// to a temporary name in the same directory and renamed into place, so
// concurrent writers — goroutines or separate processes — never produce and
// readers never see a partial event. Files are 0600 and the directory 0700:
// events hold resource properties, which may be secrets.
//
// Events are ordered by timestamp, then event id. KSUIDs sort by time only
// to the second, so the id alone would misorder two resources ensured in
// the same second, and require/subscribe would see the wrong "latest" event.
//
// A file that is not a valid event (hand-edited, truncated by a full disk)
// is an error naming the file, never skipped: skipping a failed event could
// let a resource that requires it run.
//
// It builds on package session and must not import the engine or the host.
package sessionstore
