package host

import (
	"strings"
	"testing"
)

func TestLogBudget(t *testing.T) {
	var b logBudget
	var lines []string
	var bytes int
	out := func(level, msg string) {
		lines = append(lines, level+" "+msg)
		bytes += len(msg)
	}
	long := strings.Repeat("x", 10<<10)
	for i := 0; i < 1000; i++ {
		b.pass(out, "hostile#flood", "info", long+"\nshort")
	}
	if bytes > maxLogBytes+1024 {
		t.Errorf("%d bytes passed, the budget is %d", bytes, maxLogBytes)
	}
	if !strings.HasPrefix(lines[0], "info "+strings.Repeat("x", maxLogLine)+"... (line of 10240 bytes cut at 4096)") {
		t.Errorf("first line %.80q...", lines[0])
	}
	last := lines[len(lines)-1]
	if want := "warn hostile#flood logged more than 1 MiB in one call (log_bytes limit); the rest of its log lines are dropped"; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
	if n := strings.Count(strings.Join(lines, "\n"), "log_bytes limit"); n != 1 {
		t.Errorf("the drop was announced %d times", n)
	}
}
