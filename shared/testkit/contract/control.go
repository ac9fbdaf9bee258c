package contract

import (
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// control: the crawl's scope and its agents.
func control(t *testing.T, open Opener) {
	run(t, []testCase{
		{"Scope", func(t *testing.T) {
			s := open(t)
			addScope(t, s, "example.org:8080", "example.com", "example.com")
			for _, tt := range []struct {
				host string
				want bool
			}{
				{"example.com", true},
				{"example.org:8080", true},
				{"example.org", false},
				{"www.example.com", false},
				{"", false},
			} {
				if got, err := s.InScope(t.Context(), tt.host); err != nil || got != tt.want {
					t.Errorf("InScope(%q) = %v, %v; want %v", tt.host, got, err, tt.want)
				}
			}
			hosts, err := s.ScopeHosts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"example.com", "example.org:8080"}; !reflect.DeepEqual(hosts, want) {
				t.Errorf("ScopeHosts = %v, want %v", hosts, want)
			}
			before := snapshot(t, s)
			addScope(t, s, "example.com")
			if err := s.AddScopeHost(t.Context(), ""); crawl.KindOf(err) != crawl.KindInvalid {
				t.Errorf("AddScopeHost(\"\") = %v, want a KindInvalid error", err)
			}
			unchanged(t, s, before, "adding a host again, and an empty one")
			if in, err := s.InScope(t.Context(), ""); err != nil || in {
				t.Errorf("InScope(\"\") after adding it = %v, %v; want false", in, err)
			}
		}},
		{"Agents", func(t *testing.T) {
			s := open(t)
			a := crawl.Agent{TimeStarted: 1700000000, UUID: AgentUUID, Name: "fetcher", HTTPUserAgent: ptr("crawler/1.0")}
			other := a
			other.Name, other.TimeStarted, other.HTTPUserAgent = "other", 5, nil
			for _, step := range []struct {
				name    string
				do      func() error
				changes bool // false: the store must hold what it held before
			}{
				{"register", func() error { return s.RegisterAgent(t.Context(), a) }, true},
				{"register again, with other fields: the first stays", func() error { return s.RegisterAgent(t.Context(), other) }, false},
				{"finish", func() error { return s.FinishAgent(t.Context(), a.UUID, 1700000900) }, true},
				{"register after finishing", func() error { return s.RegisterAgent(t.Context(), a) }, false},
				{"finish an unknown agent: nothing recorded", func() error { return s.FinishAgent(t.Context(), "no-such-agent", 5) }, false},
				{"without a user agent", func() error {
					return s.RegisterAgent(t.Context(), crawl.Agent{TimeStarted: 1, UUID: "agent-2", Name: "bare"})
				}, true},
			} {
				before := snapshot(t, s)
				if err := step.do(); err != nil {
					t.Errorf("%s: %v", step.name, err)
				}
				if !step.changes {
					unchanged(t, s, before, step.name)
				}
			}
			before := snapshot(t, s)
			if err := s.RegisterAgent(t.Context(), crawl.Agent{Name: "x"}); crawl.KindOf(err) != crawl.KindInvalid {
				t.Errorf("RegisterAgent without a uuid = %v, want a KindInvalid error", err)
			}
			unchanged(t, s, before, "a refused agent")
			// A registered agent's crawls are recorded under its uuid.
			cr := FailedCrawl("http://example.com/a", "crawl-a")
			if _, err := s.RecordCrawl(t.Context(), cr, nil); err != nil {
				t.Fatal(err)
			}
			if got := mustGetCrawl(t, s, "crawl-a"); got.Log.AgentUUID != AgentUUID {
				t.Errorf("crawl's agent %q, want %q", got.Log.AgentUUID, AgentUUID)
			}
		}},
	})
}
