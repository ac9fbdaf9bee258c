package linkheader

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   []Link
	}{
		{"one canonical", []string{`<https://example.com/page>; rel="canonical"`},
			[]Link{{"https://example.com/page", []string{"canonical"}}}},
		{"token value, no space, upper case",
			[]string{`<http://a/b>;REL=Canonical`}, []Link{{"http://a/b", []string{"canonical"}}}},
		{"several links and fields", []string{`<a>; rel=next, <b>; rel="prev"`, `</c>; rel="canonical alternate"`},
			[]Link{{"a", []string{"next"}}, {"b", []string{"prev"}}, {"/c", []string{"canonical", "alternate"}}}},
		{"commas inside the target and a quoted parameter",
			[]string{`<https://e.com/a,b>; title="x, y"; rel=canonical, <z>; rel=next`},
			[]Link{{"https://e.com/a,b", []string{"canonical"}}, {"z", []string{"next"}}}},
		{"a second rel is ignored", []string{`<a>; rel=next; rel=canonical`}, []Link{{"a", []string{"next"}}}},
		{"escaped quote", []string{`<a>; title="say \"hi\", ok"; rel=canonical`}, []Link{{"a", []string{"canonical"}}}},
		{"a malformed link-value is skipped, not the others",
			[]string{`garbage; rel=canonical, <b>; rel=canonical`}, []Link{{"b", []string{"canonical"}}}},
		{"unterminated target", []string{`<a; rel=canonical`}, nil},
		{"unterminated quote", []string{`<a>; rel="canonical`}, nil},
		{"parameter without a value", []string{`<a>; crossorigin; rel=preload`}, []Link{{"a", []string{"preload"}}}},
		{"no rel", []string{`<a>`}, []Link{{"a", nil}}},
		{"a trailing semicolon", []string{`<a>;rel=canonical; , <b>; rel=next;`},
			[]Link{{"a", []string{"canonical"}}, {"b", []string{"next"}}}},
		{"empty", []string{"", " , "}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.values); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q)\n got %q\nwant %q", tt.values, got, tt.want)
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		values []string
		want   string
		ok     bool
	}{
		{[]string{`<a>; rel=next, <b>; rel="alternate canonical", <c>; rel=canonical`}, "b", true},
		{[]string{`<a>; rel=next`}, "", false},
		{nil, "", false},
	}
	for _, tt := range tests {
		if got, ok := Canonical(tt.values); got != tt.want || ok != tt.ok {
			t.Errorf("Canonical(%q) = %q, %v; want %q, %v", tt.values, got, ok, tt.want, tt.ok)
		}
	}
}
