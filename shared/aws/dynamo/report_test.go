package dynamo

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestShownDuplicateOf(t *testing.T) {
	end := func(n int64) *int64 { return &n }
	tests := []struct {
		name   string
		h      []dupStatus
		closed *int64 // the generation's confirmed end
		want   string
	}{
		{"never a duplicate", nil, nil, ""},
		{"open status", []dupStatus{{OfURL: "a", End: end(5)}, {OfURL: "b"}}, nil, "b"},
		{"re-pointed: the open one, listed first", []dupStatus{{OfURL: "b"}, {OfURL: "a", End: end(5)}}, nil, "b"},
		{"no longer a duplicate: the last to end", []dupStatus{{OfURL: "a", End: end(9)}, {OfURL: "b", End: end(5)}}, nil, "a"},
		{"closed: the last to end, the later of a tie", []dupStatus{{OfURL: "a", End: end(5)}, {OfURL: "b", End: end(9)}, {OfURL: "c", End: end(9)}}, end(9), "c"},
	}
	for _, tt := range tests {
		if got := (&genItem{History: tt.h, ConfirmedEnd: tt.closed}).shownDuplicateOf(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSnippet(t *testing.T) {
	words := make([]string, 40)
	for i := range words {
		words[i] = "w" + strconv.Itoa(i)
	}
	long := strings.Join(words, " ")
	tests := []struct {
		name  string
		text  string
		terms []string
		want  string
	}{
		{"whole text", "lighthouse lamps burn oil", []string{"oil"}, "lighthouse lamps burn [oil]"},
		{"punctuation kept between tokens", "Hello, World! Again.", []string{"world"}, "Hello, [World]! Again"},
		{"window around the hit", long, []string{"w20"}, "…" + strings.Join(words[13:20], " ") + " [w20] " + strings.Join(words[21:29], " ") + "…"},
		{"most distinct terms win", long, []string{"w2", "w30", "w33"}, "…" + strings.Join(words[24:30], " ") + " [w30] w31 w32 [w33] " + strings.Join(words[34:40], " ")},
		{"no hit: the start", long, []string{"zzz"}, strings.Join(words[:16], " ") + "…"},
		{"empty", "", []string{"x"}, ""},
	}
	for _, tt := range tests {
		terms := map[string]bool{}
		for _, w := range tt.terms {
			terms[w] = true
		}
		if got := snippet(tt.text, terms); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestSearchTokens(t *testing.T) {
	var got []string
	searchTokens("Crème-Brûlée, CAFÉ 42x naïve_ok", func(_, _ int, tok string) { got = append(got, tok) })
	want := []string{"creme", "brulee", "cafe", "42x", "naive", "ok"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}
