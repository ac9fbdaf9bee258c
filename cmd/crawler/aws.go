package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/s3blob"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// stackFlag is how a command selects the AWS home: --stack NAME, or the
// CRAWLER_STACK environment variable. what says what the command does
// with the stack.
func stackFlag(fs *flag.FlagSet, what string) *string {
	return fs.String("stack", os.Getenv("CRAWLER_STACK"), what+" (the CloudFormation stack `NAME` given to sam deploy; env CRAWLER_STACK)")
}

// describeStack reads a deployed stack's outputs and parameters.
func describeStack(ctx context.Context, name string) (stack.Deployed, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return stack.Deployed{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	return stack.Describe(ctx, cloudformation.NewFromConfig(cfg), name)
}

// openStack returns the metadata store of a deployed stack.
func openStack(ctx context.Context, name string) (*dynamo.DB, error) {
	d, err := describeStack(ctx, name)
	if err != nil {
		return nil, err
	}
	t, err := d.Tables()
	if err != nil {
		return nil, err
	}
	c, err := stack.NewClients(ctx, stack.WithS3)
	if err != nil {
		return nil, err
	}
	db := dynamo.New(c.DynamoDB, t)
	if b := d.Outputs[stack.OutBucket]; b != "" {
		db.SetBlobs(s3blob.New(c.S3, b))
	}
	return db, nil
}

func cmdEnqueue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("enqueue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	queueURL := fs.String("queue-url", os.Getenv("CRAWLER_QUEUE_URL"), "send to the SQS queue at this `URL` (the stack's "+stack.OutEnqueueQueue+" output), instead of naming the stack (env CRAWLER_QUEUE_URL)")
	stackName := stackFlag(fs, "send to this deployed stack's enqueue queue")
	enqueueType := fs.String("enqueue-type", "none", "the seed 004 enqueue-`type` of each URL: none (crawl it if it is new or due), forced (crawl it again now), reenqueued (make it due now, with conditional GET), status (only report it)")
	maxDepth := fs.Int("max-depth", -1, "follow links at most `N` hops from these URLs (-1: the stack's default)")
	priority := fs.Int("priority", 0, "higher `N` is crawled first")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler enqueue (--stack NAME | --queue-url URL) [flags] URL... (or - to read URLs, one per line, from stdin)\n\nSends an enqueue event per URL to a deployed crawler's enqueue queue.")
		printFlags(fs, stderr)
	}
	urls, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(urls) == 1 && urls[0] == "-" {
		urls = nil
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); s != "" && !strings.HasPrefix(s, "#") {
				urls = append(urls, s)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("read URLs from stdin: %w", err)
		}
	}
	if len(urls) == 0 {
		return usagef("give at least one URL")
	}
	if *queueURL == "" && *stackName != "" {
		d, err := describeStack(ctx, *stackName)
		if err != nil {
			return err
		}
		*queueURL = d.Outputs[stack.OutEnqueueQueue]
	}
	if *queueURL == "" {
		return usagef("give --queue-url (the stack's %s output) or --stack", stack.OutEnqueueQueue)
	}
	var bodies [][]byte
	for _, u := range urls {
		ev := crawl.EnqueueEvent{Version: crawl.EnqueueVersion, URL: u, Priority: *priority, EnqueueType: crawl.EnqueueType(*enqueueType)}
		if *maxDepth >= 0 {
			ev.MaxDepth = maxDepth
		}
		b, _ := json.Marshal(ev)
		// The scheduler reads it the same way: refuse here what it would
		// dead-letter (an ftp: URL, say, which would be sent and only
		// found in the dead-letter queue).
		if _, err := crawl.ParseEnqueueEvent(b); err != nil {
			return usagef("%s: %v", crawl.Truncate(u, 100), err)
		}
		if err := checkURL(u); err != nil {
			return err
		}
		bodies = append(bodies, b)
	}
	c, err := stack.NewClients(ctx)
	if err != nil {
		return err
	}
	q, err := sendChecked(ctx, c, *queueURL, bodies...)
	if err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	fmt.Fprintf(stdout, "enqueued %d URL(s) in %d request(s)\n", len(bodies), q.Counts().Calls())
	return nil
}

// sendChecked sends bodies to the queue at queueURL once it has read the
// queue's MaximumMessageSize: a message SQS would refuse (too large for
// this queue, empty, or not XML characters) is a usage error, and then
// nothing is sent.
func sendChecked(ctx context.Context, c stack.Clients, queueURL string, bodies ...[]byte) (*sqsq.Queue, error) {
	q := sqsq.New(c.SQS, queueURL)
	if _, err := q.ReadLimit(ctx); err != nil {
		return nil, err
	}
	if err := q.Send(ctx, bodies...); err != nil {
		if crawl.KindOf(err) == crawl.KindInvalid {
			return nil, usageError{err}
		}
		return nil, err
	}
	return q, nil
}

func cmdWait(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stackName := stackFlag(fs, "watch this deployed stack's queues")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this `duration`")
	every := fs.Duration("every", 5*time.Second, "look at the queues this often")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler wait --stack NAME [flags]: return once the stack's queues have been empty three times in a row")
		printFlags(fs, stderr)
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *stackName == "" {
		return usagef("give --stack (or set CRAWLER_STACK)")
	}
	d, err := describeStack(ctx, *stackName)
	if err != nil {
		return err
	}
	c, err := stack.NewClients(ctx)
	if err != nil {
		return err
	}
	var qs []stack.NamedQueue
	for _, out := range stack.WorkQueues {
		if d.Outputs[out] == "" {
			return fmt.Errorf("stack %s has no output %s: is it the crawler's stack?", *stackName, out)
		}
		qs = append(qs, stack.NamedQueue{Name: strings.TrimSuffix(out, "Url"), Queue: sqsq.New(c.SQS, d.Outputs[out])})
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	start := time.Now()
	err = stack.WaitSettled(ctx, qs, *every, 3, func(busy string) {
		fmt.Fprintf(stderr, "%s busy: %s\n", time.Since(start).Round(time.Second), busy)
	})
	if err != nil {
		return fmt.Errorf("wait for stack %s: %w", *stackName, err)
	}
	// The queues say nothing of the URLs due later (a recrawl, a host's
	// Retry-After, an unavailable robots.txt): the schedule releases
	// them then, and status says when.
	fmt.Fprintf(stdout, "settled after %s: the queues are empty (URLs due later, by a recrawl period or a host that asked to wait, are released by the schedule then; crawler status URL says when)\n",
		time.Since(start).Round(time.Second))
	return nil
}
