// Command tracewait reads an execution trace of a crawl (`crawler crawl
// --trace FILE`) and says where one goroutine spent its time: running,
// runnable (ready, waiting for a processor), in system calls, or blocked,
// and, for each time it was runnable, what it had been blocked on and
// which goroutine woke it. It is how BENCHMARKS.md's "Where the writer
// waits" was measured: the one SQLite writer is found by its own frames
// (-func), and its time split as the runtime recorded it.
//
//	go run . -func 'sqlite.(*DB).write' TRACE
//
// A module of its own, as bench/sqlitedrivers: the trace reader
// (golang.org/x/exp/trace) is no dependency of the crawler.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strings"

	"golang.org/x/exp/trace"
)

func main() {
	fn := flag.String("func", "sqlite.(*DB).write", "the goroutine to follow: the first whose own stack ends in a frame with this suffix")
	top := flag.Int("top", 12, "how many blocking and waking stacks to list")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: tracewait [-func NAME] TRACE")
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	var (
		evs         []trace.Event
		g           trace.GoID = trace.NoGoroutine
		first, last trace.Time
	)
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if first == 0 {
			first = ev.Time()
		}
		last = ev.Time()
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		if from, _ := st.Goroutine(); g == trace.NoGoroutine && from == trace.GoRunning && hasFrame(ev.Stack(), *fn) {
			g = st.Resource.Goroutine()
		}
		evs = append(evs, ev)
	}
	if g == trace.NoGoroutine {
		log.Fatalf("no goroutine ran %s", *fn)
	}
	fmt.Printf("trace of %.2f s; goroutine %d (%s)\n", float64(last-first)/1e9, g, *fn)

	in := map[trace.GoState]trace.Time{}
	runnableAfter := map[string]trace.Time{} // what it was blocked on before each runnable spell
	blockedOn, wokenBy := map[string]int{}, map[string]int{}
	var (
		state   trace.GoState
		since   trace.Time
		started bool
		onWhat  string
	)
	for _, ev := range evs {
		st := ev.StateTransition()
		if st.Resource.Goroutine() != g {
			continue
		}
		from, to := st.Goroutine()
		if started {
			in[state] += ev.Time() - since
			if state == trace.GoRunnable {
				runnableAfter[onWhat] += ev.Time() - since
			}
		}
		switch {
		case to == trace.GoWaiting:
			onWhat = st.Reason + ": " + frames(ev.Stack(), 4, "")
			blockedOn[onWhat]++
		case from == trace.GoWaiting && to == trace.GoRunnable:
			wokenBy[frames(ev.Stack(), 3, "crawler/")]++
		case to == trace.GoRunnable:
			onWhat = "(" + from.String() + ")"
		}
		state, since, started = to, ev.Time(), true
	}
	for _, s := range []trace.GoState{trace.GoRunning, trace.GoRunnable, trace.GoSyscall, trace.GoWaiting} {
		fmt.Printf("  %-9s %6.2f s\n", s, float64(in[s])/1e9)
	}
	fmt.Println("runnable, by what it had been blocked on before:")
	list(runnableAfter, *top, func(v trace.Time) string { return fmt.Sprintf("%6.3f s", float64(v)/1e9) })
	fmt.Println("blocked on (times):")
	list(blockedOn, *top, func(v int) string { return fmt.Sprintf("%6d", v) })
	fmt.Println("woken by (times; the waker's frames of this module):")
	list(wokenBy, *top, func(v int) string { return fmt.Sprintf("%6d", v) })
}

func list[V int | trace.Time](m map[string]V, n int, show func(V) string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	for _, k := range keys[:min(n, len(keys))] {
		fmt.Printf("  %s  %s\n", show(m[k]), k)
	}
}

func hasFrame(s trace.Stack, suffix string) bool {
	for f := range s.Frames() {
		if strings.HasSuffix(f.Func, suffix) {
			return true
		}
	}
	return false
}

// frames names the first n frames of s (those containing only, if only
// is set), innermost first, each without its package path.
func frames(s trace.Stack, n int, only string) string {
	var out []string
	for f := range s.Frames() {
		if only != "" && !strings.Contains(f.Func, only) {
			continue
		}
		out = append(out, f.Func[strings.LastIndex(f.Func, "/")+1:])
		if len(out) == n {
			break
		}
	}
	return strings.Join(out, " < ")
}
