package schedule

import "sync"

// pendingURLs are the URLs this scheduler is admitting now: read, and
// perhaps about to be written. The pages of a batch are admitted at once
// and share most of their links, so without it each of them read every
// link new to it (on the documentation tree, 6,533 candidate reads for
// 543 pages, from one scheduler). A second admission of a URL waits for
// the first and is then deduped from memory (knownURLs).
//
// Claims are taken without waiting while a page's links are decided (the
// page's other claims are held until its write, so waiting there could
// deadlock two pages on each other's links): a URL claimed elsewhere is
// decided again once the page's own writes are done and its claims let
// go (AdmitEach's again), where waiting is safe.
type pendingURLs struct {
	mu sync.Mutex
	m  map[string]*claim
}

// claim is one admission's hold on a URL; done closes when it lets go.
type claim struct {
	url  string
	done chan struct{}
}

// take claims url, or returns the claim that holds it.
func (p *pendingURLs) take(url string) (mine *claim, held *claim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.m[url]; c != nil {
		return nil, c
	}
	if p.m == nil {
		p.m = map[string]*claim{}
	}
	c := &claim{url: url, done: make(chan struct{})}
	p.m[url] = c
	return c, nil
}

// release lets go of c; releasing it again does nothing.
func (p *pendingURLs) release(c *claim) {
	if c == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m[c.url] == c {
		delete(p.m, c.url)
		close(c.done)
	}
}
