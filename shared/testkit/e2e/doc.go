// Package e2e holds the end-to-end test of a deployed stack: `make e2e`
// deploys template.yaml onto a local AWS endpoint (infra/e2e.sh), then
// this package's test serves a site on 127.0.0.1, sends enqueue events to
// the stack's queue, waits for the crawl to settle and checks what the
// functions wrote to DynamoDB and S3 against what the site served and
// logged; then it waits for the recrawl schedule and checks the
// conditional GETs. It talks to the stack only through AWS APIs, so it
// runs as well against a stack on AWS (CRAWLER_E2E_STACK names it).
package e2e
