// Package warcio reads WARC files in tests the way users' tools do: with
// warcio (PyPI), the library pywb and most WARC tools build on,
// installed by infra/pytools.sh. make test sets CRAWLER_TEST_PYTOOLS to
// its virtualenv's bin directory; without it the tests that need it skip.
package warcio

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Bin returns the directory of warcio's virtualenv, or skips the test.
func Bin(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("CRAWLER_TEST_PYTOOLS")
	if bin == "" {
		t.Skip("CRAWLER_TEST_PYTOOLS is not set (make test sets it from infra/pytools.sh)")
	}
	return bin
}

// Check runs `warcio check`, which verifies every record's digests.
func Check(t testing.TB, bin, path string) {
	t.Helper()
	if out, err := exec.Command(filepath.Join(bin, "warcio"), "check", "-v", path).CombinedOutput(); err != nil {
		t.Fatalf("warcio check %s: %v\n%s", path, err, out)
	}
}

// Record is a record as warcio's ArchiveIterator reads it.
type Record struct {
	Type   string `json:"type"`
	URI    string `json:"uri"`
	Status string `json:"status"` // a response's HTTP status
	Body   []byte `json:"-"`      // a response's payload
	Hex    string `json:"body"`
}

const script = `
import json, sys
from warcio.archiveiterator import ArchiveIterator
with open(sys.argv[1], 'rb') as f:
    for r in ArchiveIterator(f):
        out = {"type": r.rec_type, "uri": r.rec_headers.get_header('WARC-Target-URI') or ""}
        if r.rec_type == 'response' and r.http_headers is not None:
            out["status"] = r.http_headers.get_statuscode()
            out["body"] = r.content_stream().read().hex()
        print(json.dumps(out))
`

// Records reads every record of the file at path.
func Records(t testing.TB, bin, path string) []Record {
	t.Helper()
	out, err := exec.Command(filepath.Join(bin, "python"), "-c", script, path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("warcio reading %s: %v\n%s", path, err, ee.Stderr)
		}
		t.Fatalf("warcio reading %s: %v", path, err)
	}
	var recs []Record
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("warcio printed %q: %v", line, err)
		}
		if r.Body, err = hex.DecodeString(r.Hex); err != nil {
			t.Fatalf("warcio printed a body that is not hex: %v", err)
		}
		recs = append(recs, r)
	}
	return recs
}
