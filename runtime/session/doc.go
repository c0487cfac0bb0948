// Package session records the TransactionEvents of one run (or, for
// `ccm ensure`, of several processes sharing a directory store) and answers
// the two questions the engine asks of it: what is the latest event of a
// type#name or type#alias, and what does the run add up to.
//
// Lookups are indexed: recording and finding an event are O(1), so a run of
// N resources with require/subscribe is O(N) (CCM scans every event per
// lookup. It must not import the engine or the host.
package session
