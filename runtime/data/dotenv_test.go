package data

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadDotEnv(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    map[string]string
		wantErr string
	}{
		{
			// A file CCM's parser mangles.
			name: "CCM's example",
			content: `QUOTED="httpd"
export EXPORTED=1
SPACED = value
EMPTY=
# COMMENTED=yes
`,
			want: map[string]string{"QUOTED": "httpd", "EXPORTED": "1", "SPACED": "value", "EMPTY": ""},
		},
		{name: "blank lines and CRLF", content: "\r\nA=1\r\n\r\nB=2\r\n", want: map[string]string{"A": "1", "B": "2"}},
		{name: "BOM", content: "\uFEFFA=1\n", want: map[string]string{"A": "1"}},
		{name: "double quotes escapes", content: `A="line1\nline2\t\"q\" \\ \$"`, want: map[string]string{"A": "line1\nline2\t\"q\" \\ \\$"}},
		{name: "single quotes literal", content: `A='a\nb "c" # not a comment'`, want: map[string]string{"A": `a\nb "c" # not a comment`}},
		{name: "value with equals", content: "URL=http://x/?a=b", want: map[string]string{"URL": "http://x/?a=b"}},
		{name: "inline comment on unquoted", content: "A=value # note", want: map[string]string{"A": "value"}},
		{name: "hash without space kept", content: "A=a#b", want: map[string]string{"A": "a#b"}},
		{name: "comment after quotes", content: `A="x" # note`, want: map[string]string{"A": "x"}},
		{name: "empty quotes", content: `A=""`, want: map[string]string{"A": ""}},
		{name: "quote inside unquoted kept", content: `A=it's`, want: map[string]string{"A": "it's"}},
		{name: "later wins", content: "A=1\nA=2", want: map[string]string{"A": "2"}},
		{name: "indented", content: "   export   A = 1  ", want: map[string]string{"A": "1"}},
		{name: "dotted key", content: "a.b=1", want: map[string]string{"a.b": "1"}},
		{name: "no equals", content: "A=1\nJUSTAWORD\n", wantErr: ".env:2: expected KEY=value"},
		{name: "bad key", content: "MY KEY=1", wantErr: `.env:1: "MY KEY" is not a variable name`},
		{name: "digit key", content: "1A=1", wantErr: "is not a variable name"},
		{name: "unterminated quote", content: `A="abc`, wantErr: ".env:1: A: missing closing \" quote"},
		{name: "junk after quote", content: `A="abc" def`, wantErr: `unexpected "def" after the closing quote`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".env")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadDotEnv(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadDotEnv: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v want %#v", got, tt.want)
			}
		})
	}
}

func TestLoadDotEnvMissing(t *testing.T) {
	got, err := LoadDotEnv(filepath.Join(t.TempDir(), ".env"))
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("missing file: got %v, %v; want an empty map and no error", got, err)
	}
}

func TestLoadDotEnvUnreadable(t *testing.T) {
	dir := t.TempDir() // a directory is not readable as a file
	if _, err := LoadDotEnv(dir); err == nil {
		t.Fatal("reading a directory must fail")
	}
}

func TestEnviron(t *testing.T) {
	t.Setenv("CCM_TEST_PROCESS", "from-process")
	t.Setenv("CCM_TEST_BOTH", "from-process")
	got := Environ(map[string]string{"CCM_TEST_BOTH": "from-dotenv", "CCM_TEST_DOTENV": "x"})
	for k, want := range map[string]string{"CCM_TEST_PROCESS": "from-process", "CCM_TEST_BOTH": "from-dotenv", "CCM_TEST_DOTENV": "x"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if got["PATH"] != os.Getenv("PATH") {
		t.Errorf("PATH not inherited")
	}
}
