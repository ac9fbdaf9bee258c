# The crawler's build, run and test targets. See README.md.
GO       ?= go
BIN      := bin
FUNCTIONS := scheduler fetcher parser summarizer
# The functions' CPU: template.yaml's Architecture parameter (arm64 by
# default). make e2e builds for the host's (amd64 here) because the
# emulator runs the bootstraps as host processes.
LAMBDA_GOARCH ?= arm64
GOFLAGS_LAMBDA := CGO_ENABLED=0 GOOS=linux GOARCH=$(LAMBDA_GOARCH)
LDFLAGS  := -s -w

.PHONY: all build crawler functions run test unit race vet fmt-check fuzz validate bench clean e2e e2e-up e2e-check e2e-down test-localstack

all: build

## build: the CLI and every Lambda function
build: crawler functions

crawler:
	$(GO) build -trimpath -o $(BIN)/crawler ./cmd/crawler

functions:
	@for f in $(FUNCTIONS); do \
		echo "build functions/$$f (linux/$(LAMBDA_GOARCH))"; \
		$(GOFLAGS_LAMBDA) $(GO) build -tags lambda.norpc -trimpath -ldflags='$(LDFLAGS)' -o $(BIN)/functions/$$f/bootstrap ./functions/$$f || exit 1; \
	done

## run: serve the demo site on loopback, crawl it, show a status and a search
run: crawler
	./$(BIN)/crawler demo --data demo-data

## test: vet, format check, and every test; the AWS adapters' tests run
## against DynamoDB Local and ministack, installed and started by infra/.
## One package at a time (-p 1): ministack 1.5.33 mixes up messages when
## two test binaries use its SQS at once (a message received twice, a
## receipt handle refused), which parallel packages would turn into flakes.
## WARC files are also read with warcio (infra/pytools.sh) in the tests.
test: vet fmt-check
	CRAWLER_TEST_PYTOOLS=$$(infra/pytools.sh bin) infra/with-emulators.sh $(GO) test -p 1 -count=1 ./...

## unit: every test that needs no emulator (the AWS adapters' are skipped)
unit: vet fmt-check
	$(GO) test -count=1 ./...

## race: every test under the race detector (slower; CI runs it)
race:
	CRAWLER_TEST_PYTOOLS=$$(infra/pytools.sh bin) infra/with-emulators.sh $(GO) test -p 1 -race -count=1 ./...

## test-localstack: the AWS adapters' tests, the contract suite among
## them, against real LocalStack 4.14.0 on the host (SQS, S3, and
## DynamoDB through DynamoDB Local's jars) instead of ministack and
## DynamoDB Local: a second emulator's opinion. Needs Python 3.12+
## (infra/localstack.sh); not part of CI.
test-localstack:
	@port=$${LOCALSTACK_PORT:-4567}; LOCALSTACK_PORT=$$port infra/localstack.sh start || exit 1; \
	CRAWLER_TEST_AWS=http://127.0.0.1:$$port CRAWLER_TEST_DYNAMODB=http://127.0.0.1:$$port \
		$(GO) test -p 1 -count=1 ./shared/aws/sqsq ./shared/aws/s3blob ./shared/aws/dynamo ./shared/aws/handlers; rc=$$?; \
	LOCALSTACK_PORT=$$port infra/localstack.sh stop; exit $$rc

## fuzz: every fuzz target (func Fuzz... in a _test.go) for FUZZTIME
## each; CI runs it briefly. A crasher is written to the package's
## testdata/fuzz/ and stays there as a regression case.
## Go 1.26's fuzzer may fail a run that found nothing with a bare
## "context deadline exceeded" as -fuzztime ends (golang/go#75804, fixed
## in Go 1.27): then no failing input was written, and the target's
## corpus is replayed instead, which is the deterministic check.
FUZZTIME ?= 10s
fuzz:
	@log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	grep -rl --include='*_test.go' '^func Fuzz' shared cmd | sort | while read -r f; do \
		pkg=./$$(dirname "$$f"); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$f"); do \
			echo "fuzz $$pkg $$t ($(FUZZTIME))"; \
			if $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) "$$pkg" >"$$log" 2>&1; then cat "$$log"; continue; fi; \
			cat "$$log"; \
			if grep -q 'context deadline exceeded' "$$log" && ! grep -q -e 'Failing input written' -e 'panic:' "$$log"; then \
				echo "fuzz $$t: the fuzzer's end-of-run deadline race (golang/go#75804), no input failed; replaying the corpus"; \
				$(GO) test -count=1 -run "^$$t\$$" "$$pkg" || exit 1; \
			else exit 1; fi; \
		done; \
	done

## validate: sam validate --lint on template.yaml (SAM CLI pinned by infra/)
validate:
	infra/sam.sh run validate --lint --region us-east-1

vet:
	$(GO) vet ./...
	GOOS=linux GOARCH=arm64 $(GO) vet -tags lambda.norpc ./functions/...

fmt-check:
	@out=$$(gofmt -l cmd shared functions); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## e2e: deploy template.yaml with the SAM CLI onto ministack on
## 127.0.0.1 (no Docker), crawl a test site through the deployed
## functions and check DynamoDB, S3 and the site's log, then tear down.
## E2E_ENDPOINT=http://localhost:4566 uses a running LocalStack instead.
e2e:
	@infra/e2e.sh up || { infra/e2e.sh down; exit 1; }
	@infra/e2e.sh check; rc=$$?; infra/e2e.sh down; exit $$rc

## e2e-up, e2e-check, e2e-down: the same steps one at a time, to keep
## the stack (crawler-e2e) up and crawl other sites through it; see
## `infra/e2e.sh env` for the environment the CLI needs.
e2e-up:
	infra/e2e.sh up
e2e-check:
	infra/e2e.sh check
e2e-down:
	infra/e2e.sh down

## bench: the Go benchmarks of the hot paths, then the crawl benchmark:
## the crawler, wget2 and colly crawl python3.11-doc served on loopback,
## and the crawler recrawls it unchanged (crawler-recrawl: --recrawl,
## answered 304), BENCH_RUNS (5) runs each, medians (bench/run.sh). See
## BENCHMARKS.md.
bench: bench-go bench-crawl

.PHONY: bench-go bench-crawl bench-quick bench-profile bench-build bench-scale bench-concurrency bench-bodies bench-hosts bench-recrawl
BENCH_DOC_ROOT_CMD := bench/inputs.sh | sed -n 's/^DOC_ROOT=//p'

## bench-go: parse and extraction, URL normalization, SQLite writes per page
bench-go:
	BENCH_DOC_ROOT=$$($(BENCH_DOC_ROOT_CMD)) $(GO) test -run='^$$' -bench=. -benchmem ./shared/...

## bench-crawl: the crawl benchmark alone
bench-crawl:
	bench/run.sh

## bench-quick: each Go benchmark once and one run of each tool (a smoke
## test of the benchmarks, not figures to quote)
bench-quick:
	BENCH_DOC_ROOT=$$($(BENCH_DOC_ROOT_CMD)) $(GO) test -run='^$$' -bench=. -benchtime=1x -benchmem ./shared/...
	BENCH_RUNS=1 bench/run.sh

## bench-profile: CPU profiles of the Go benchmarks and of a whole crawl,
## with go tool pprof -top, in .local-bench/profiles/
bench-profile:
	bench/profile.sh

## bench-build: the crawler and the crawl benchmark's server and runner
bench-build: crawler
	$(GO) build -trimpath -o $(BIN)/bench-serve ./bench/serve
	$(GO) build -trimpath -o $(BIN)/bench-run ./bench/run

## bench-scale: the crawler alone on synthetic sites (bench/serve -synth)
## of SCALE_SIZES pages, BENCH_RUNS (1) runs each: wall time, pages/s
## and peak RSS by size, to see whether the time grows linearly. Large
## sites take long (100,000 pages: hours at today's speed): try
## SCALE_SIZES=1000,3000 first. A run is killed after BENCH_TIMEOUT
## (default 10 min + 100 ms a page), and the larger sizes are then
## skipped. Results in .local-bench/results/TIME/.
SCALE_SIZES ?= 10000,30000,100000
bench-scale: bench-build
	$(BIN)/bench-run -scale $(SCALE_SIZES) -runs $${BENCH_RUNS:-1} -concurrency $${BENCH_CONCURRENCY:-8} -timeout $${BENCH_TIMEOUT:-0}

## bench-bodies: the crawler's peak RSS on one page of BODIES_MB (1,10,50)
## MB of HTML (bench/bodies.sh)
bench-bodies:
	bench/bodies.sh

## bench-hosts: a crawl of HOSTS_N (4) synthetic sites at --delay
## HOSTS_DELAY (200ms): whether they are crawled side by side
## (bench/hosts.sh)
bench-hosts:
	bench/hosts.sh

## eval: search quality on seven documentation trees: the judged queries
## of bench/eval/queries.tsv (python3.11-doc, the tree ranking was tuned
## on), and, as checks that it was not tuned to one site,
## bench/eval/sphinx-queries.tsv (sphinx-doc), pg-queries.tsv
## (postgresql-doc-15), flask-queries.tsv (python-flask-doc),
## django-queries.tsv (python-django-doc), sqlalchemy-queries.tsv
## (python-sqlalchemy-doc), git-queries.tsv (git-doc) and jdk-queries.tsv
## (openjdk-17-doc, the Java API's javadoc, 10,140 pages), through
## crawler search: P@1, P@3, MRR and the headline fill rate (bench/eval;
## crawls each tree into .local-bench/eval-data[-sphinx|-pg|...] once:
## remove them after a change to extraction). EVAL_FLAGS=-v prints each
## query's top 3.
# Each tree: its name, the bench/inputs.sh variable of its root, the
# suffix of its crawl's directory, its queries.
EVAL_TREES := python3.11-doc,DOC_ROOT,,queries sphinx-doc,SPHINX_DOC_ROOT,-sphinx,sphinx-queries \
	postgresql-doc-15,PG_DOC_ROOT,-pg,pg-queries python-flask-doc,FLASK_DOC_ROOT,-flask,flask-queries \
	python-django-doc,DJANGO_DOC_ROOT,-django,django-queries \
	python-sqlalchemy-doc,SQLALCHEMY_DOC_ROOT,-sqlalchemy,sqlalchemy-queries git-doc,GIT_DOC_ROOT,-git,git-queries \
	openjdk-17-doc,JDK_DOC_ROOT,-jdk,jdk-queries
.PHONY: eval
eval: bench-build
	@vars=$$(bench/inputs.sh) && eval "$$vars" && $(GO) build -o bin/bench-eval ./bench/eval && \
	for t in $(EVAL_TREES); do \
		IFS=, && set -- $$t && IFS=' ' && eval "root=\$$$$2" && echo "$$1:" && \
		bin/bench-eval -root "$$root" -data "$${EVAL_DATA:-.local-bench/eval-data}$$3" \
			-queries "bench/eval/$$4.tsv" $(EVAL_FLAGS) || exit 1; \
	done

## bench-recrawl: the adaptive recrawl policy (seed 001 MRate) against a
## fixed period with the same fetches, on a simulated site of 10,000
## pages (5% change hourly, 25% daily, 70% never) over 30 simulated days
## (bench/recrawlsim; RECRAWL_FLAGS for its flags, e.g. -period 12)
bench-recrawl:
	$(GO) run ./bench/recrawlsim $(RECRAWL_FLAGS)

## bench-concurrency: the crawler alone on the python3.11-doc tree
## (bench/inputs.sh) at each --concurrency of CONC_LEVELS, BENCH_RUNS (1)
## runs each: pages/s by level.
CONC_LEVELS ?= 1,2,4,8,32
bench-concurrency: bench-build
	@vars=$$(bench/inputs.sh) && eval "$$vars" && \
	$(BIN)/bench-run -root "$$DOC_ROOT" -levels $(CONC_LEVELS) -runs $${BENCH_RUNS:-1} -inputs "python3.11-doc $$DOC_VERSION"

# SAM's makefile build method: one target per function's LogicalId.
build-SchedulerFunction:
	$(GOFLAGS_LAMBDA) $(GO) build -tags lambda.norpc -trimpath -ldflags='$(LDFLAGS)' -o $(ARTIFACTS_DIR)/bootstrap ./functions/scheduler
build-FetcherFunction:
	$(GOFLAGS_LAMBDA) $(GO) build -tags lambda.norpc -trimpath -ldflags='$(LDFLAGS)' -o $(ARTIFACTS_DIR)/bootstrap ./functions/fetcher
build-ParserFunction:
	$(GOFLAGS_LAMBDA) $(GO) build -tags lambda.norpc -trimpath -ldflags='$(LDFLAGS)' -o $(ARTIFACTS_DIR)/bootstrap ./functions/parser
build-SummarizerFunction:
	$(GOFLAGS_LAMBDA) $(GO) build -tags lambda.norpc -trimpath -ldflags='$(LDFLAGS)' -o $(ARTIFACTS_DIR)/bootstrap ./functions/summarizer

clean:
	rm -rf $(BIN) demo-data .aws-sam
