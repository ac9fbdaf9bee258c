package textenc

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, ct string
		body     []byte
		want     string
		charset  string
	}{
		{"utf8 header", "text/html; charset=utf-8", []byte("<p>héllo</p>"), "<p>héllo</p>", "utf-8"},
		{"latin1 header", "text/html; charset=iso-8859-1", []byte("<p>h\xe9llo</p>"), "<p>héllo</p>", "windows-1252"},
		{"bom", "text/html", []byte("\xef\xbb\xbf<p>x</p>"), "<p>x</p>", "utf-8"},
		{"meta shift_jis", "text/html", append([]byte(`<meta charset="shift_jis"><p>`), 0x93, 0xfa, 0x96, 0x7b), `<meta charset="shift_jis"><p>日本`, "shift_jis"},
		{"windows-1252 header", "text/html; charset=windows-1252", []byte("<p>\x93quoted\x94 \x80</p>"), "<p>\u201cquoted\u201d \u20ac</p>", "windows-1252"},
		{"euc-jp header", "text/html; charset=EUC-JP", []byte("<p>\xc6\xfc\xcb\xdc</p>"), "<p>日本</p>", "euc-jp"},
		{"gbk meta", "text/html", append([]byte(`<meta http-equiv="Content-Type" content="text/html; charset=gbk"><p>`), 0xd6, 0xd0, 0xce, 0xc4), `<meta http-equiv="Content-Type" content="text/html; charset=gbk"><p>中文`, "gbk"},
		{"utf-16 bom", "text/plain", []byte("\xff\xfeh\x00i\x00"), "hi", "utf-16le"},
		{"invalid utf8 replaced", "text/plain; charset=utf-8", []byte("a\xffb"), "a\uFFFDb", "utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cs, err := Decode(tt.body, tt.ct)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || cs != tt.charset {
				t.Errorf("Decode = %q (%s), want %q (%s)", got, cs, tt.want, tt.charset)
			}
		})
	}
}

func TestMediaType(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "",
		"text/HTML; charset=UTF-8": "text/html",
		"text/html;;":              "text/html",
		"garbage":                  "",
		"application/pdf":          "application/pdf",
	} {
		if got := MediaType(in); got != want {
			t.Errorf("MediaType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeAs(t *testing.T) {
	ascii := strings.Repeat("plain ascii ", 100) // past the first KiB
	tests := []struct {
		name, ct, mimetype string
		body               []byte
		want, charset      string
	}{
		{"plain text, UTF-8 past the first KiB, no charset", "text/plain", "text/plain", []byte(ascii + "café"), ascii + "café", "utf-8"},
		{"plain text, Latin-1 bytes, no charset", "text/plain", "text/plain", []byte(ascii + "caf\xe9"), ascii + "café", "windows-1252"},
		{"plain text, the header's charset wins", "text/plain; charset=iso-8859-1", "text/plain", []byte("caf\xc3\xa9"), "cafÃ©", "windows-1252"},
		{"sniffed text, no header", "", "text/plain", []byte("# Notes\n\nnaïve\n"), "# Notes\n\nnaïve\n", "utf-8"},
		{"HTML keeps the HTML standard's guess", "text/html", "text/html", []byte("<p>" + ascii + "café</p>"), "<p>" + ascii + "cafÃ©</p>", "windows-1252"},
		{"a UTF-16 byte order mark", "text/plain", "text/plain", []byte("\xff\xfeh\x00i\x00"), "hi", "utf-16le"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cs, err := DecodeAs(tt.body, tt.ct, tt.mimetype)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || cs != tt.charset {
				t.Errorf("DecodeAs = %q (%s), want %q (%s)", got, cs, tt.want, tt.charset)
			}
		})
	}
}

func TestLooksBinary(t *testing.T) {
	pad := strings.Repeat("a", 1445)
	tests := []struct {
		name string
		body string
		want bool
	}{
		{"plain ASCII", "hello\r\nworld\tand a form feed\f", false},
		{"UTF-8 words", "café naïve", false},
		{"empty", "", false},
		{"a NUL", "hello\x00world", true},
		{"a PDF", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\x0b", true},
		{"gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00", true},
		{"ESC is text (0x1B)", "\x1b[1mbold\x1b[0m", false},
		{"UTF-16LE with its BOM", "\xff\xfeh\x00i\x00", false},
		{"UTF-16BE with its BOM", "\xfe\xff\x00h\x00i", false},
		{"UTF-8 BOM then a NUL", "\xef\xbb\xbfa\x00", false},
		{"a binary byte past the sniffed header", pad + "\x00", false},
		{"a binary byte at its last byte", pad[1:] + "\x01", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LooksBinary([]byte(tt.body)); got != tt.want {
				t.Errorf("LooksBinary(%q) = %v, want %v", head(tt.body), got, tt.want)
			}
		})
	}
}

func head(s string) string { return s[:min(len(s), 40)] }
