package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestEnqueueChecksTheQueuesLimit: `crawler enqueue` reads the queue's
// MaximumMessageSize and refuses (exit 2, nothing sent) what SQS would,
// against the emulator at CRAWLER_TEST_AWS, which itself would take it.
func TestEnqueueChecksTheQueuesLimit(t *testing.T) {
	ep := os.Getenv("CRAWLER_TEST_AWS")
	if ep == "" {
		t.Skip("CRAWLER_TEST_AWS is not set: start an emulator (infra/ministack.sh start) and set it to its endpoint")
	}
	t.Setenv("AWS_ENDPOINT_URL", ep)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("CRAWLER_STACK", "")
	t.Setenv("CRAWLER_QUEUE_URL", "")
	ctx := context.Background()
	api := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	out, err := api.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String("cli" + strings.ReplaceAll(uuid.NewString()[:13], "-", "")),
		Attributes: map[string]string{"MaximumMessageSize": "1024"},
	})
	if err != nil {
		t.Fatal(err)
	}
	queue := aws.ToString(out.QueueUrl)
	t.Cleanup(func() { api.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) })

	long := "https://example.org/" + strings.Repeat("a", 1100)
	_, stderr, code := runCLI(t, "enqueue", "--queue-url", queue, "https://example.org/", long)
	if code != 2 || !strings.Contains(stderr, "over the 1024-byte limit") {
		t.Errorf("a message over the queue's limit: exit %d, %q; want 2 naming the limit", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "enqueue", "--queue-url", queue, "--priority", "5", "https://example.org/")
	if code != 0 || !strings.Contains(stdout, "enqueued 1 URL(s)") {
		t.Fatalf("enqueue: exit %d, %q %q", code, stdout, stderr)
	}
	// Each receive hides what it takes for a second only, and an empty
	// answer is asked again: under load ministack now and then resets a
	// connection in the middle of its answer, the SDK retries, and the
	// message the lost answer took would otherwise stay hidden for the
	// queue's 30 s visibility timeout (as in the handlers' deadLetters).
	// A message received twice (same ID) counts once.
	ids := map[string]types.Message{}
	for try := 0; try < 4 && len(ids) == 0; try++ {
		got, err := api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: out.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2, VisibilityTimeout: 1})
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		for _, m := range got.Messages {
			ids[aws.ToString(m.MessageId)] = m
		}
	}
	if len(ids) != 1 {
		t.Fatalf("received %d messages; want the one sent (none of the refused call)", len(ids))
	}
	var msg types.Message
	for _, m := range ids {
		msg = m
	}
	ev, err := crawl.ParseEnqueueEvent([]byte(aws.ToString(msg.Body)))
	if err != nil || ev.URL != "https://example.org/" || ev.Priority != 5 {
		t.Errorf("message %+v, %v", ev, err)
	}
}
