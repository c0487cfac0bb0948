package template

import (
	"errors"
	"strings"
	"testing"
)

type regEntry struct {
	Address  string
	Port     int64
	Priority int64
}

type regEntries []*regEntry

func (r regEntries) PrometheusFileSD() (string, error) { return "sd:" + r[0].Address, nil }

func TestRegistrations(t *testing.T) {
	var got [4]string
	x := New(Env{Registrations: func(c, p, s, a string) (any, error) {
		got = [4]string{c, p, s, a}
		if c == "down" {
			return nil, errors.New("nats: no servers available for connection")
		}
		return regEntries{{"10.0.0.1", 80, 10}, {"10.0.0.2", 81, 20}}, nil
	}})
	for src, want := range map[string]string{
		`{{ registrations("prod", "http", "web", "*")[1].Address }}`:                                                                                         "10.0.0.2",
		`{{ len(registrations("prod", "http", "web", "*")) }}`:                                                                                               "2",
		`{{ registrations("prod", "http", "web", "*").PrometheusFileSD() }}`:                                                                                 "sd:10.0.0.1",
		`{{ jet("[[ range _, e := registrations(\"prod\", \"http\", \"web\", \"*\") ]]s [[ e.Address ]]:[[ e.Port ]] w[[ 256 - e.Priority ]];[[ end ]]") }}`: "s 10.0.0.1:80 w246;s 10.0.0.2:81 w236;",
		`{{ jet("[[ registrations(\"prod\", \"http\", \"web\", \"*\").PrometheusFileSD() ]]") }}`:                                                            "sd:10.0.0.1",
	} {
		v, err := x.String(src)
		if err != nil || v != want {
			t.Errorf("%s: got %q, %v; want %q", src, v, err, want)
		}
	}
	if got != [4]string{"prod", "http", "web", "*"} {
		t.Fatal(got)
	}
	for src, want := range map[string]string{
		`{{ registrations("down", "*", "*", "*") }}`: "registrations: nats: no servers available",
		`{{ registrations("prod") }}`:                "registrations requires 4 string arguments",
		`{{ registrations("prod", 1, "*", "*") }}`:   "registrations argument 2 must be a string",
	} {
		if _, err := x.String(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
	if _, err := New(Env{}).String(`{{ registrations("a", "b", "c", "d") }}`); !errors.Is(err, ErrNotSupported) {
		t.Fatal(err)
	}
}
