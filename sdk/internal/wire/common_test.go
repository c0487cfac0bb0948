package wire

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestCommonKnowsABIKeys: every JSON key of sdk/abi decodes without an
// allocation of its own, so a new field cannot silently miss the fast path.
func TestCommonKnowsABIKeys(t *testing.T) {
	files, err := filepath.Glob("../../abi/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no abi sources: %v", err)
	}
	tag := regexp.MustCompile(`json:"([a-z0-9_]+)`)
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tag.FindAllSubmatch(src, -1) {
			n++
			if w, ok := common(m[1]); !ok || w != string(m[1]) {
				t.Errorf("%s: key %q is not in common(); add it to common.go", filepath.Base(f), m[1])
			}
			if len(m[1]) > maxCommon {
				t.Errorf("key %q is longer than maxCommon %d", m[1], maxCommon)
			}
		}
	}
	if n < 50 {
		t.Fatalf("found only %d json tags in sdk/abi; is the regexp stale?", n)
	}
	if !slices.IsSortedFunc(commonWords[:], func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	}) {
		t.Fatal("commonWords is not sorted: common's binary search would miss words")
	}
	for _, w := range commonWords {
		if got, ok := common([]byte(w)); !ok || got != w {
			t.Errorf("common(%q) = %q, %v", w, got, ok)
		}
	}
	if _, ok := common([]byte("contnet")); ok {
		t.Fatal(`common("contnet") matched`)
	}
}

// TestWordDecodesLikeStr: the fast path gives the same strings as the
// general one, for common words, escaped spellings of them, other words,
// and non-ASCII text.
func TestWordDecodesLikeStr(t *testing.T) {
	doc := `{"type":"file","n\u0061me":"/etc/motd","properties":{"ensure":"present","contnet":"x","mode":"0644","owner":"r\u00f6ot","group":"0644\n","content":"présent"}}`
	var got abi.Request
	if err := Unmarshal([]byte(doc), &got); err != nil {
		t.Fatal(err)
	}
	want := abi.Request{Type: "file", Name: "/etc/motd", Properties: map[string]any{
		"ensure": "present", "contnet": "x", "mode": "0644", "owner": "röot", "group": "0644\n", "content": "présent",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

// TestRequestAllocs bounds what decoding one stable file's request
// allocates (keys and common values come from common; 25 before it, 11 after).
func TestRequestAllocs(t *testing.T) {
	doc := []byte(`{"type":"file","name":"/srv/files/f1.txt","properties":{"content":"file 1","ensure":"present","group":"root","mode":"0644","owner":"root"},"working_dir":"/srv","no_state":true}`)
	allocs := testing.AllocsPerRun(100, func() {
		var r abi.Request
		if err := Unmarshal(doc, &r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 12 {
		t.Fatalf("decoding a request allocates %v times, want at most 12", allocs)
	}
}

// TestCommonTable: every word is found within a few probes, the table has
// room to spare, and words one edit away from a common one are not found.
func TestCommonTable(t *testing.T) {
	if len(commonWords) >= len(commonTable)*3/4 || len(commonWords) > 255 {
		t.Fatalf("%d words for %d slots: grow commonMask", len(commonWords), len(commonTable))
	}
	worst := 0
	for _, w := range commonWords {
		probes := 1
		for h := commonHash(w); commonWords[commonTable[h]-1] != w; h = (h + 1) & commonMask {
			probes++
		}
		worst = max(worst, probes)
	}
	if worst > 4 {
		t.Errorf("a common word takes %d probes; choose commonHash's constants again", worst)
	}
	for _, w := range commonWords {
		for _, miss := range []string{w[1:], w[:len(w)-1], w + "x", "x" + w, strings.ToUpper(w)} {
			if got, ok := common([]byte(miss)); ok != slices.Contains(commonWords[:], miss) || ok && got != miss {
				t.Errorf("common(%q) = %q, %v", miss, got, ok)
			}
		}
	}
}
