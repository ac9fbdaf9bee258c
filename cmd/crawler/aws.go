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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/dynamo"
	"github.com/serverless-crawler/crawler/shared/s3blob"
	"github.com/serverless-crawler/crawler/shared/sqsq"
	"github.com/serverless-crawler/crawler/shared/stack"
)

// The stack outputs the CLI reads (template.yaml's Outputs).
const (
	outEnqueueQueue = "EnqueueQueueUrl"
	outCandidates   = "CandidatesTableName"
	outCrawlLog     = "CrawlLogTableName"
	outGenerations  = "GenerationsTableName"
	outControl      = "ControlTableName"
	outBucket       = "BodiesBucketName"
)

// stackFlag is how a command selects the AWS home: --stack NAME, or the
// CRAWLER_STACK environment variable.
func stackFlag(fs *flag.FlagSet) *string {
	return fs.String("stack", os.Getenv("CRAWLER_STACK"), "read the deployed CloudFormation `stack` instead of a data directory (env CRAWLER_STACK)")
}

// stackOutputs reads a deployed stack's outputs.
func stackOutputs(ctx context.Context, name string) (map[string]string, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("describe stack %s: %w", name, err)
	}
	if len(out.Stacks) == 0 {
		return nil, fmt.Errorf("stack %s not found", name)
	}
	m := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		m[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return m, nil
}

// openStack returns the metadata store of a deployed stack.
func openStack(ctx context.Context, name string) (*dynamo.DB, error) {
	outs, err := stackOutputs(ctx, name)
	if err != nil {
		return nil, err
	}
	t := dynamo.Tables{Candidates: outs[outCandidates], CrawlLog: outs[outCrawlLog], Generations: outs[outGenerations], Control: outs[outControl]}
	if t.Candidates == "" || t.Generations == "" {
		return nil, fmt.Errorf("stack %s has no %s/%s outputs: is it the crawler's stack?", name, outCandidates, outGenerations)
	}
	c, err := stack.NewClients(ctx)
	if err != nil {
		return nil, err
	}
	db := dynamo.New(c.DynamoDB, t)
	if b := outs[outBucket]; b != "" {
		db.SetBlobs(s3blob.New(c.S3, b))
	}
	return db, nil
}

func cmdEnqueue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("enqueue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	queueURL := fs.String("queue-url", os.Getenv("CRAWLER_QUEUE_URL"), "the stack's enqueue queue `URL` (env CRAWLER_QUEUE_URL)")
	stackName := stackFlag(fs)
	enqueueType := fs.String("enqueue-type", "none", "`type`: none, forced, reenqueued, status (seed 004)")
	maxDepth := fs.Int("max-depth", -1, "follow links at most `N` hops from these URLs (-1: the stack's default)")
	priority := fs.Int("priority", 0, "higher `N` is crawled first")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler enqueue --queue-url URL [flags] URL... (or - to read URLs, one per line, from stdin)")
		fs.PrintDefaults()
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
		outs, err := stackOutputs(ctx, *stackName)
		if err != nil {
			return err
		}
		*queueURL = outs[outEnqueueQueue]
	}
	if *queueURL == "" {
		return usagef("give --queue-url (the stack's %s output) or --stack", outEnqueueQueue)
	}
	var bodies [][]byte
	for _, u := range urls {
		ev := crawl.EnqueueEvent{Version: crawl.EnqueueVersion, URL: u, Priority: *priority, EnqueueType: crawl.EnqueueType(*enqueueType)}
		if *maxDepth >= 0 {
			ev.MaxDepth = maxDepth
		}
		b, _ := json.Marshal(ev)
		// The scheduler reads it the same way: refuse here what it would dead-letter.
		if _, err := crawl.ParseEnqueueEvent(b); err != nil {
			return usagef("%s: %v", u, err)
		}
		bodies = append(bodies, b)
	}
	c, err := stack.NewClients(ctx)
	if err != nil {
		return err
	}
	q := sqsq.New(c.SQS, *queueURL)
	if err := q.Send(ctx, bodies...); err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	fmt.Fprintf(stdout, "enqueued %d URL(s) in %d request(s)\n", len(bodies), q.Counts().Calls())
	return nil
}
