package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/blobfs"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// software names the crawler in the warcinfo records it writes.
const software = "serverless-crawler (github.com/serverless-crawler/crawler)"

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "crawl-data", "data `directory`")
	warcPath := fs.String("warc", "", "write every response the crawl got to `FILE` as WARC 1.1 (gzip per record; - for stdout)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler export [flags] --warc FILE")
		fmt.Fprintln(stderr, "Writes the crawl in the data directory as a file other tools read (pywb, warcio, OpenWayback).")
		printFlags(fs, stderr)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("export takes no arguments (got %q)", pos)
	}
	if *warcPath == "" {
		return usagef("say what to write: --warc FILE")
	}
	db, err := openForReading(ctx, *data)
	if err != nil {
		return err
	}
	defer db.Close()
	blobs, err := blobfs.New(filepath.Join(*data, "blobs"))
	if err != nil {
		return err
	}

	// Written beside the file and renamed at the end: a failed export
	// leaves no half file under the name asked for.
	out, commit, err := create(*warcPath, stdout)
	if err != nil {
		return err
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<20)
	n, left, err := exportWARC(ctx, db, blobs, bw, filepath.Base(*warcPath))
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = commit()
	}
	if err != nil {
		return fmt.Errorf("export to %s: %w", *warcPath, err)
	}
	fmt.Fprintf(stderr, "exported %d responses to %s\n", n, *warcPath)
	if len(left.missing) > 0 {
		fmt.Fprintf(stderr, "warning: %d bodies were not in %s and their responses were left out, the first: %s\n",
			len(left.missing), filepath.Join(*data, "blobs"), left.missing[0])
	}
	if len(left.cut) > 0 {
		fmt.Fprintf(stderr, "note: %d responses whose body was not received whole (timeout, network-error, too-large, bad-content) were left out, the first: %s\n",
			len(left.cut), left.cut[0])
	}
	if len(left.badStatus) > 0 {
		fmt.Fprintf(stderr, "note: %d responses with no valid HTTP status (a status line such as \"HTTP/1.1 000\", recorded bad-content) were left out, the first: %s\n",
			len(left.badStatus), left.badStatus[0])
	}
	return nil
}

// create opens path for writing through a temporary file that commit
// renames into place ("-" is stdout, committed as it goes).
func create(path string, stdout io.Writer) (io.WriteCloser, func() error, error) {
	if path == "-" {
		return nopCloser{stdout}, func() error { return nil }, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, nil, usagef("cannot write %s: %v", path, err)
	}
	commit := func() error {
		if err := f.Chmod(0o644); err != nil { // CreateTemp's is 0600
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Rename(f.Name(), path)
	}
	return removeOnClose{f}, commit, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// removeOnClose removes the temporary file unless it was renamed.
type removeOnClose struct{ *os.File }

func (f removeOnClose) Close() error {
	f.File.Close()
	if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// leftOut names the responses an export left out, by why.
type leftOut struct {
	missing   []string // their body was not in the blob store
	cut       []string // a 2xx whose body was not received whole
	badStatus []string // a status no WARC record can carry (under 100 or over 999)
}

// exportWARC writes a warcinfo record, then a response and a request
// record for every response in the database, and returns how many
// responses it wrote and the URLs of those it left out.
//
// The response heads are rebuilt from what the database keeps (seed 000
// keeps no raw headers): the status, Content-Type, Content-Language,
// X-Robots-Tag, ETag, Last-Modified, Location and Content-Length; the
// body is the one kept in the blob store, as the crawler decoded it
// (no transfer or content coding). Responses that kept no body (a 304,
// a 404, a redirect) are written with an empty one. A 2xx response whose
// body was not received whole (a timeout, a network error, too large,
// undecodable: nothing was kept) is left out and counted in cut, since
// a replay tool would serve its empty record as the page. So is a
// response whose status no HTTP message can carry (a server's "000",
// recorded bad-content), which would fail the whole export.
func exportWARC(ctx context.Context, db *sqlite.DB, blobs *blobfs.Store, w io.Writer, name string) (n int, left leftOut, err error) {
	ww := warc.NewWriter(w, 0)
	if _, err := ww.Info(name, software, time.Now().UTC()); err != nil {
		return 0, left, err
	}
	err = db.Responses(ctx, func(r sqlite.Response) error {
		if r.Status < 100 || r.Status > 999 {
			left.badStatus = append(left.badStatus, r.URL)
			return nil
		}
		if r.Status/100 == 2 && r.BodyKey == nil && r.ExitCode.Failed() {
			left.cut = append(left.cut, r.URL)
			return nil
		}
		e := warc.Exchange{
			URL: r.URL, Date: time.Unix(r.TimeSent, 0).UTC(), Status: r.Status,
			Request: http.Header{}, Response: http.Header{},
		}
		if u, err := url.Parse(r.URL); err == nil {
			e.Request.Set("Host", u.Host)
		}
		if r.UserAgent != nil {
			e.Request.Set("User-Agent", *r.UserAgent)
		}
		for k, v := range map[string]*string{"Content-Type": r.ContentType, "Content-Language": r.ContentLanguage,
			"X-Robots-Tag": r.XRobotsTag, "Etag": r.ETag, "Location": r.Location} {
			if v != nil && *v != "" {
				e.Response.Set(k, *v)
			}
		}
		if r.LastModified != nil {
			e.Response.Set("Last-Modified", time.Unix(*r.LastModified, 0).UTC().Format(http.TimeFormat))
		}
		if r.BodyKey != nil {
			body, err := blobs.Get(ctx, *r.BodyKey)
			switch {
			case errors.Is(err, crawl.ErrNotFound):
				left.missing = append(left.missing, r.URL)
				return nil
			case err != nil:
				return fmt.Errorf("the body of %s: %w", r.URL, err)
			}
			e.Body = body
		}
		if _, err := ww.WriteExchange(e); err != nil {
			return err
		}
		n++
		return ctx.Err()
	})
	return n, left, err
}
