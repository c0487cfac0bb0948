package engine

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": `
data: {who: world, n: 2}
ccm:
  fail_on_error: true
  resources:
    - mark:
        - defaults: {value: "{{ Data.n }}"}
        - "hello-{{ Data.who }}":
            later: "{{ Data.who }}!"
            require: [mark#x]
            alias: hi
        - bad-later:
            later: "{{ lookup('data.missing') }}"
            control: {if: "false"}
    - apply:
        - c.yaml: {data: {port: "{{ Data.n }}"}}
`,
		"c.yaml": "data: {port: 80}\nccm:\n  resources:\n    - mark:\n        - child: {value: \"{{ Data.port }}\"}\n",
	})
	f := &fakePlugins{}
	docs, err := New(Options{Plugins: f}).Render(context.Background(), filepath.Join(dir, "m.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.names()) != 0 {
		t.Fatalf("render applied resources: %v", f.names())
	}
	if len(docs) != 2 || docs[0].File != "m.yaml" || docs[1].File != "c.yaml" || docs[1].Depth != 1 {
		t.Fatalf("docs = %+v", docs)
	}
	if !docs[0].FailOnError || docs[0].Data["who"] != "world" {
		t.Fatalf("root = %+v", docs[0])
	}
	hello := docs[0].Resources[0]["mark"].(map[string]any)
	want := map[string]any{"name": "hello-world", "ensure": "present", "value": 2, "later": "world!", "require": []string{"mark#x"}, "alias": "hi"}
	if !reflect.DeepEqual(hello, want) {
		t.Fatalf("rendered resource = %#v\nwant %#v", hello, want)
	}
	if got := docs[0].Resources[1]["mark"].(map[string]any)["later"]; !strings.Contains(got.(string), "lookup") {
		t.Fatalf("a deferred field that cannot expand should stay as written, got %v", got)
	}
	if got := docs[1].Resources[0]["mark"].(map[string]any)["value"]; got != 2 {
		t.Fatalf("child sees passed data: value = %v", got)
	}
}

func TestRenderRefusesWhatARunWould(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": "ccm:\n  resources:\n    - apply:\n        - c.yaml: {allow_apply: false}\n",
		"c.yaml": "ccm:\n  resources:\n    - apply:\n        - d.yaml: {}\n",
		"d.yaml": "ccm:\n  resources:\n    - mark:\n        - x: {}\n",
	})
	_, err := New(Options{Plugins: &fakePlugins{}}).Render(context.Background(), filepath.Join(dir, "m.yaml"))
	if err == nil || !strings.Contains(err.Error(), "allow_apply: false") {
		t.Fatalf("err = %v", err)
	}
}
