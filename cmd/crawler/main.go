// Command crawler crawls web sites on one machine (the embedded home:
// SQLite, files and in-process queues), and reads what it found; with
// --stack it reads, and feeds, a crawl deployed on AWS.
//
//	crawler crawl  [flags] URL...   crawl until nothing is due
//	crawler recrawl [flags]         crawl what is due now in a data directory
//	crawler status [flags] URL      a URL's state and latest generation, as JSON
//	crawler search [flags] QUERY    the full-text index, best first
//	crawler export --warc FILE      the crawl's responses as WARC 1.1
//	crawler report [flags]          an HTML page of charts of what the crawl did
//	crawler site   OP [flags] ...   manage sites (seed 001): add, set, show, list, disable, enable
//	crawler enqueue [flags] URL...  send URLs to a deployed stack's enqueue queue
//	crawler demo   [flags]          serve a demo site on loopback, crawl it, search it
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

const usage = `usage: crawler <command> [flags] [args]

commands:
  crawl   crawl the given URLs (and what they link to, within scope) until nothing is due
  recrawl crawl what is due now in a data directory (pages by their recrawl dates, sites by RecrawlDate)
  status  show what the crawl knows of a URL, as JSON
  search  search the full-text index
  export  write the crawl's responses as a WARC file (--warc FILE)
  report  write an HTML page of charts of what the crawl did (crawl-report.html)
  site    manage sites: add, set, show, list, disable, enable (their roots, filters, limits, state)
  enqueue send URLs to a deployed stack's enqueue queue (batched)
  wait    wait until a deployed stack's crawl has settled (its queues are empty)
  demo    serve a small demo site on loopback, crawl it, and search it

Run 'crawler <command> -h' for a command's flags.
`

func main() {
	// What the standard library logs with the log package (net/http's
	// "Unsolicited response received on idle HTTP channel", when a server
	// sends more than its Content-Length) is not the user's business: it
	// goes through slog at Info, below what is printed. Each command
	// logs through its own --log-level logger.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	// SIGINT or SIGTERM cancels the command's context with the signal as
	// its cause (run turns it into the exit status); a second one ends
	// the process at once, as it would without the crawler's handling.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		signal.Stop(sigs)
		cancel(signalled{sig})
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// signalled is the cause of a command's context cancelled by a signal.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string { return "interrupted by " + s.sig.String() }

// interruptedStatus is the exit status of a command a signal stopped:
// 128 and the signal's number, as shells give (130 for SIGINT, 143 for
// SIGTERM), so that a script can tell a stopped crawl from a finished
// one; false if no signal stopped it.
func interruptedStatus(ctx context.Context) (int, bool) {
	var s signalled
	if !errors.As(context.Cause(ctx), &s) {
		return 0, false
	}
	if n, ok := s.sig.(syscall.Signal); ok {
		return 128 + int(n), true
	}
	return 130, true
}

// exitUsage is the exit status for bad flags, arguments or data directory.
const exitUsage = 2

// run runs one command and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "crawl":
		err = cmdCrawl(ctx, args[1:], stdout, stderr)
	case "recrawl":
		err = cmdRecrawl(ctx, args[1:], stdout, stderr)
	case "status":
		err = cmdStatus(ctx, args[1:], stdout, stderr)
	case "search":
		err = cmdSearch(ctx, args[1:], stdout, stderr)
	case "enqueue":
		err = cmdEnqueue(ctx, args[1:], stdout, stderr)
	case "wait":
		err = cmdWait(ctx, args[1:], stdout, stderr)
	case "export":
		err = cmdExport(ctx, args[1:], stdout, stderr)
	case "report":
		err = cmdReport(ctx, args[1:], stdout, stderr)
	case "site":
		err = cmdSite(ctx, args[1:], stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "crawler: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	if code, ok := interruptedStatus(ctx); ok && (err == nil || errors.Is(err, context.Canceled)) {
		if err != nil {
			// Stopped before the crawl's own summary (which says how to
			// continue), while it opened its data directory or resumed.
			again := ""
			if args[0] == "crawl" || args[0] == "recrawl" {
				again = "; run the same command again to continue"
			}
			fmt.Fprintf(stderr, "crawler %s: %v%s\n", args[0], context.Cause(ctx), again)
		}
		return code
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, sqlite.ErrCorrupt):
		fmt.Fprintf(stderr, "crawler %s: %v\n  The data directory's database is damaged and was left as it is: restore crawl.db from a backup, "+
			"or move the data directory aside and crawl again.\n", args[0], err)
		return exitUsage
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "crawler %s: %v\n", args[0], err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "crawler %s: %v\n", args[0], err)
		return 1
	}
}

// usageError is a problem with what the user asked for.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// parseInterspersed parses flags that may come before, between or after
// the positional arguments, and returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
