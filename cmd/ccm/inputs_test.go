package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/facts"
)

// TestLoadInputs: the one input loader of apply and ensure reads .env,
// --data over the resolved Hiera data, an optional Hiera file only when
// present, and --grants, with the messages both commands print.
func TestLoadInputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(".env", "CCM_INPUTS_TEST=from-dotenv\n")
	hiera := write("hiera.yaml", "data:\n  port: 1\n  kept: yes\n")
	noFacts := facts.Options{Dirs: []string{}}
	ctx := context.Background()

	in, err := loadInputs(ctx, io.Discard, inputOptions{facts: noFacts, readEnv: true, data: []string{"port=2"}, hiera: hiera})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(in.external["port"]) != "2" || in.external["kept"] == nil || in.environ["CCM_INPUTS_TEST"] != "from-dotenv" || in.grants != nil || in.facts == nil {
		t.Fatalf("inputs %+v", in)
	}

	in, err = loadInputs(ctx, io.Discard, inputOptions{facts: noFacts, data: []string{"a=b"}, hiera: filepath.Join(dir, "absent"), hieraOptional: true})
	if err != nil || in.external["a"] != "b" || in.environ["CCM_INPUTS_TEST"] != "" {
		t.Fatalf("optional Hiera file absent: %+v, %v", in, err)
	}

	_, err = loadInputs(ctx, io.Discard, inputOptions{facts: noFacts, hiera: filepath.Join(dir, "absent")})
	if err == nil || !strings.HasPrefix(err.Error(), "--hiera: ") || !errors.Is(err, errHieraSource) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("required Hiera file absent: %v", err)
	}

	bad := write("grants.yaml", "fs_reed: [/]\n")
	if _, err := loadInputs(ctx, io.Discard, inputOptions{facts: noFacts, grantsFile: bad}); err == nil || !strings.HasPrefix(err.Error(), "--grants "+bad+": ") {
		t.Fatalf("bad grants: %v", err)
	}
	good := write("good.yaml", "fs_read: [/etc/**]\n")
	if in, err := loadInputs(ctx, io.Discard, inputOptions{facts: noFacts, grantsFile: good}); err != nil || len(in.grants) != 1 || in.grants[0].FSRead[0] != "/etc/**" {
		t.Fatalf("grants: %+v, %v", in, err)
	}
}
