package parse

import (
	"strings"
	"testing"
)

func TestExtractPlain(t *testing.T) {
	long := strings.Repeat("word ", 60) // 300 bytes on one line
	tests := []struct {
		name, body, contentLanguage string
		headline, text, language    string // "": none
	}{
		{name: "first line with words is the headline", body: "\n*****\n  Release   notes \n\nThe build is faster.\n",
			headline: "Release notes", text: "*****\nRelease notes\nThe build is faster."},
		{name: "a long first line is cut at a space", body: long + "\nsecond",
			headline: strings.TrimSpace(strings.Repeat("word ", 40)) + "…", text: strings.TrimSpace(long) + "\nsecond"},
		{name: "Content-Language wins", body: "Bonjour\n", contentLanguage: "fr-CA",
			headline: "Bonjour", text: "Bonjour", language: "fr"},
		{name: "language detected from the text",
			body:     "Der Leuchtturm steht seit über hundert Jahren am Eingang des Hafens, und jeden Abend steigt der Wärter die Treppe hinauf.\n",
			headline: "Der Leuchtturm steht seit über hundert Jahren am Eingang des Hafens, und jeden Abend steigt der Wärter die Treppe hinauf.",
			text:     "Der Leuchtturm steht seit über hundert Jahren am Eingang des Hafens, und jeden Abend steigt der Wärter die Treppe hinauf.",
			language: "de"},
		{name: "no words, no headline", body: "----\n====\n", text: "----\n===="},
		{name: "a character across the cut is not split", body: "a" + strings.Repeat("é", 150),
			headline: "a" + strings.Repeat("é", 99) + "…", text: "a" + strings.Repeat("é", 150)},
		{name: "old Mac line ends and control characters", body: "Title\rsecond\x00line\r\nthird\x7f",
			headline: "Title", text: "Title\nsecond line\nthird"},
		{name: "markup is text, not links", body: `<a href="http://example.com/x">x</a> http://example.com/y`,
			headline: `<a href="http://example.com/x">x</a> http://example.com/y`, text: `<a href="http://example.com/x">x</a> http://example.com/y`},
		{name: "empty", body: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := ExtractPlain("http://example.com/notes.txt", tt.body, tt.contentLanguage)
			if got := deref(doc.Headline); got != tt.headline {
				t.Errorf("headline %q, want %q", got, tt.headline)
			}
			if doc.Text.Text != tt.text {
				t.Errorf("text %q, want %q", doc.Text.Text, tt.text)
			}
			if tt.language != "" && deref(doc.Language) != tt.language {
				t.Errorf("language %q, want %q", deref(doc.Language), tt.language)
			}
			if doc.Title != nil || doc.Description != nil || len(doc.Links) != 0 {
				t.Errorf("title %v, description %v, %d links; want none", doc.Title, doc.Description, len(doc.Links))
			}
			if len(doc.Text.Digest) == 0 {
				t.Error("no digest")
			}
			if want := indexiness(&doc); doc.Indexiness != want {
				t.Errorf("indexiness %d, want %d (the headline counted)", doc.Indexiness, want)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
