package crawl

import "testing"

func TestExitCodesMapToSeedWords(t *testing.T) {
	words := map[string]bool{StatusComplete: true, StatusRedir: true, StatusDisallowed: true, StatusFiltered: true,
		StatusError: true, StatusDuplicate: true, StatusKilled: true, StatusUnchanged: true, StatusNone: true}
	seen := map[string]bool{}
	names := map[string]bool{}
	for _, c := range ExitCodes() {
		if !words[c.Status()] {
			t.Errorf("%v maps to %q, not a seed 004 word", c, c.Status())
		}
		seen[c.Status()] = true
		if names[c.String()] {
			t.Errorf("two codes are named %q", c)
		}
		names[c.String()] = true
	}
	for w := range words {
		if !seen[w] {
			t.Errorf("no exit code maps to %q", w)
		}
	}
	if len(ExitCodes()) != len(exitCodeInfo) {
		t.Errorf("ExitCodes lists %d codes, %d are defined", len(ExitCodes()), len(exitCodeInfo))
	}
}

func TestExitCodeCategories(t *testing.T) {
	tests := []struct {
		c                             ExitCode
		contentful, failed, requested bool
	}{
		{ExitComplete, true, false, true},
		{ExitDuplicate, true, false, true},
		{ExitUnchanged, false, false, true},
		{ExitRedirect, false, false, true},
		{ExitRobotsDisallowed, false, false, false},
		{ExitOutOfScope, false, false, false},
		{ExitHTTPClientError, false, true, true},
		{ExitHTTPServerError, false, true, true},
		{ExitTimeout, false, true, true},
		{ExitTooLarge, false, true, true},
		{ExitRedirectLoop, false, true, true},
		{ExitTooManyRedirects, false, true, false},
		{ExitInvalidURL, false, true, false},
	}
	for _, tt := range tests {
		if got := tt.c.Contentful(); got != tt.contentful {
			t.Errorf("%v.Contentful() = %v", tt.c, got)
		}
		if got := tt.c.Failed(); got != tt.failed {
			t.Errorf("%v.Failed() = %v", tt.c, got)
		}
		if got := tt.c.Requested(); got != tt.requested {
			t.Errorf("%v.Requested() = %v", tt.c, got)
		}
	}
}
