package handlers_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/serverless-crawler/crawler/shared/aws/handlers"
)

// TestLoggerCarriesRequestID: a record logged with an invocation's
// context names the invocation and the function (Lambda's text format
// here; the JSON format carries the same attributes).
func TestLoggerCarriesRequestID(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	log := handlers.Logger("fetcher")
	os.Stdout = stdout

	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	log.With("url", "http://a/").InfoContext(ctx, "fetched")
	log.DebugContext(ctx, "hidden below INFO")
	w.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 {
		t.Fatalf("logged %q, want one line (debug is below the default level)", out)
	}
	for _, want := range []string{"requestId=req-1", "function=fetcher", "url=http://a/", "message=fetched"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line %q lacks %q", lines[0], want)
		}
	}
}
