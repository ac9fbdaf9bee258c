package warc

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// MaxGap is the most bytes between two records of one file that
// ReadRefs reads through rather than asking for each record apart: a
// ranged GET costs as much as 1 MiB moved inside AWS is worth nothing,
// and the records a batch wrote lie side by side.
const MaxGap = 1 << 20

// readsAtOnce bounds ReadRefs' ranged reads in flight.
const readsAtOnce = 8

// ReadRefs reads the payloads of many records, one ranged read for each
// run of records that lie within MaxGap of each other in one file,
// instead of one a record (S3 bills by the request). It returns the
// payloads in refs' order, and for each record that could not be read
// its error, in errs (nil when all were read).
func ReadRefs(ctx context.Context, objects Ranger, refs []Ref) (payloads [][]byte, errs []error) {
	return readRefs(ctx, objects, refs, MaxGap)
}

// readRefs is ReadRefs reading through at most maxGap bytes between
// two records.
func readRefs(ctx context.Context, objects Ranger, refs []Ref, maxGap int64) (payloads [][]byte, errs []error) {
	payloads = make([][]byte, len(refs))
	var mu sync.Mutex
	fail := func(i int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if errs == nil {
			errs = make([]error, len(refs))
		}
		errs[i] = err
	}
	// Runs: indexes of refs in one file, in file order, close together.
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := strings.Compare(refs[a].Object, refs[b].Object); c != 0 {
			return c
		}
		return cmp.Compare(refs[a].Span.Offset, refs[b].Span.Offset)
	})
	type run struct {
		refs       []int
		start, end int64 // the span of the file the run's records cover
	}
	var runs []run
	for _, i := range order {
		r := refs[i]
		end := r.Span.Offset + r.Span.Length
		if n := len(runs); n > 0 && r.Object == refs[runs[n-1].refs[0]].Object && r.Span.Offset-runs[n-1].end <= maxGap {
			runs[n-1].refs = append(runs[n-1].refs, i)
			runs[n-1].end = max(runs[n-1].end, end)
			continue
		}
		runs = append(runs, run{refs: []int{i}, start: r.Span.Offset, end: end})
	}
	sem := make(chan struct{}, readsAtOnce)
	var wg sync.WaitGroup
	for _, run := range runs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			start, n := run.start, run.end-run.start
			b, err := objects.GetRange(ctx, refs[run.refs[0]].Object, start, n)
			if err == nil && int64(len(b)) != n {
				err = fmt.Errorf("read %d bytes of %d", len(b), n)
			}
			if err != nil {
				for _, i := range run.refs {
					fail(i, fmt.Errorf("read the body at %s: %w", refs[i], err))
				}
				return
			}
			for _, i := range run.refs {
				off := refs[i].Span.Offset - start
				p, err := ParsePayload(b[off : off+refs[i].Span.Length : off+refs[i].Span.Length])
				if err != nil {
					fail(i, fmt.Errorf("read the record at %s: %w", refs[i], err))
					continue
				}
				payloads[i] = p
			}
		}()
	}
	wg.Wait()
	return payloads, errs
}
