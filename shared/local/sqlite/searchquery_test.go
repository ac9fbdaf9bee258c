package sqlite

import (
	"reflect"
	"testing"
)

func TestQueryWords(t *testing.T) {
	for _, tt := range []struct {
		query string
		want  []queryWord
	}{
		{"lock between threads", []queryWord{{`"lock"`}, {`"between"`}, {`"threads"`, `"thread"`}}},
		{"sort a list of dictionaries", []queryWord{{`"sort"`}, {`"list"`}, {`"dictionaries"`, `"dictionary"`, `"dictionarie"`}}},
		{"the classes", []queryWord{{`"classes"`, `"class"`, `"classe"`}}},
		{"at the", []queryWord{{`"at"`}, {`"the"`}}},
		{`say "hi"`, []queryWord{{`"say"`}, {`"hi"`}}},
		{"lru_cache pl/pgsql", []queryWord{{`"lru"`}, {`"cache"`}, {`"pl"`}, {`"pgsql"`}}},
		{"copy Copy COPY", []queryWord{{`"copy"`}}},
		{"*^--", nil},
		{"   ", nil},
	} {
		if got := queryWords(tt.query); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("queryWords(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestNearMatch(t *testing.T) {
	got := nearMatch(queryWord{`"copy"`}, queryWord{`"files"`, `"file"`}, 2)
	if want := `(NEAR("copy" "files", 2) OR NEAR("copy" "file", 2))`; got != want {
		t.Errorf("nearMatch = %s, want %s", got, want)
	}
}
