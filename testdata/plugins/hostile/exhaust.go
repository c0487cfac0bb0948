package main

// Attacks on the host's resources and on the operator's terminal rather
// than on the grant (cmd/ccm/hostile_runtime_e2e_test.go, docs/security.md
// "Exhaustion and signals"). They register here, beside the table in
// main.go, so the two suites' attacks stay apart.

import (
	"encoding/json"
	"strings"
)

func init() {
	attacks["log_flood"] = logFlood
	attacks["control_chars"] = controlChars
	attacks["spin_logged"] = spinLogged
}

// spinLogged logs one line, then loops forever: the line tells a test
// that the call is under way, so it can signal ccm in the loop.
func spinLogged(props) string {
	rawLog(writeBlock([]byte(`{"level":"info","message":"spinning"}`)))
	spin()
	return ""
}

// logFlood logs count lines of 16 KiB (ccm_log), then succeeds: only the
// host's log cap stands between this and the operator's terminal. (The
// line is small because writing it into the kernel a byte at a time is
// slow; the host reads each call's request afresh, so count makes the
// volume.)
func logFlood(p props) string {
	count, _ := p["count"].(float64)
	line := strings.Repeat("flood ", (16<<10)/6)
	req, _ := json.Marshal(map[string]string{"level": "info", "message": line})
	block := writeBlock(req)
	for i := 0; i < int(count); i++ {
		rawLog(block)
	}
	return ""
}

// escapes clear the screen, set the window title, move the cursor home
// and fake a green ccm line, behind a C1 CSI and a bidi override.
const escapes = "\x1b[2J\x1b]0;pwned\x07\x1b[H\x1b[32mINFO  all good\x1b[0m\r\u009b31m\u202e"

// controlChars logs and fails with terminal escape sequences.
func controlChars(props) string {
	req, _ := json.Marshal(map[string]string{"level": "warn", "message": "log " + escapes})
	rawLog(writeBlock(req))
	return "error " + escapes
}
