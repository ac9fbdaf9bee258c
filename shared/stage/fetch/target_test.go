package fetch

import (
	"net/http"
	"testing"
)

func TestKeepPath(t *testing.T) {
	tests := []struct{ url, want string }{
		{"http://x/a%2Fb|c?q=%2F", "/a%2Fb|c?q=%2F"},
		{"http://x/a%2Fb^[x]", "/a%2Fb^[x]"},
		{"http://x/a%2Fb/%C3%A9", "/a%2Fb/%C3%A9"},
		{"http://x/plain?q", "/plain?q"},
		{"http://x/", "/"},
		{"http://x//a|b", "http://x//a|b"},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodGet, tt.url, nil)
		if err != nil {
			t.Fatalf("NewRequest(%q): %v", tt.url, err)
		}
		keepPath(req, tt.url)
		if got := req.URL.RequestURI(); got != tt.want {
			t.Errorf("%s: request target %q, want %q", tt.url, got, tt.want)
		}
	}
}
