// Command cost prices a crawl run from its functions' logs: the usage
// records every invocation writes (shared/aws/awsmeter.Record, msg "aws
// usage"), the fetcher's EMF records (which count the pages), and, for
// CloudWatch Logs ingestion, the size of every line. It prints dollars
// per million pages at list prices (bench/cost/costmodel), by service,
// item and function.
//
//	cost [-pages N] [-memory MB] [-memory-of fn=MB,...] [-log-bytes N] [-json] [FILE...]
//
// It reads the files named, or standard input: one log message per
// line, from every function's log group, such as
//
//	aws logs filter-log-events --log-group-name /aws/lambda/STACK/fetcher \
//	  --start-time MS --output json | jq -r '.events[].message'
//
// or `aws logs tail GROUP --since 1h` prints them (a prefix before the
// JSON, such as tail's timestamp and stream, is ignored). -pages overrides the fetcher's count; -memory and
// -memory-of give the memory of functions whose records say 0 (runs
// outside Lambda); -log-bytes overrides the measured log volume (when
// the input holds only some of the lines).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/serverless-crawler/crawler/bench/cost/costmodel"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(2)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("cost", flag.ContinueOnError)
	pages := fs.Float64("pages", 0, "pages crawled (default: the fetcher's Pages metric in the logs)")
	memory := fs.Int("memory", costmodel.DefaultMemoryMB, "memory (MB) of functions whose records say 0")
	memoryOf := fs.String("memory-of", "", "per-function memory, as fetcher=512,parser=256")
	logBytes := fs.Int64("log-bytes", -1, "log bytes ingested (default: the size of the lines read)")
	asJSON := fs.Bool("json", false, "print the estimate as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mem := map[string]int{}
	if *memoryOf != "" {
		for _, kv := range strings.Split(*memoryOf, ",") {
			k, v, ok := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if !ok || err != nil || n <= 0 {
				return fmt.Errorf("-memory-of: %q is not function=MB", kv)
			}
			mem[k] = n
		}
	}
	memoryMB := func(fn string) int {
		if n, ok := mem[fn]; ok {
			return n
		}
		return *memory
	}
	var in io.Reader = stdin
	if fs.NArg() > 0 {
		var rs []io.Reader
		for _, name := range fs.Args() {
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			defer f.Close()
			rs = append(rs, f, strings.NewReader("\n")) // a last line without its newline ends with its file
		}
		in = io.MultiReader(rs...)
	}
	t, err := costmodel.Read(in, memoryMB)
	if err != nil {
		return err
	}
	if *logBytes >= 0 {
		t.LogBytes = *logBytes
	}
	if t.Records == 0 {
		return fmt.Errorf("no usage records (msg %q) in the input", "aws usage")
	}
	e, err := costmodel.Price(t, *pages)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	costmodel.WriteMarkdown(stdout, t, e)
	return nil
}
