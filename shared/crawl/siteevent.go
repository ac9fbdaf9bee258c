package crawl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// SiteEvent manages a site: what `crawler site` does on one machine, and
// what a user sends to the enqueue queue on AWS ({"type":"site",...};
// docs/sites.md has the schema). Fields left out of a "set" keep their
// value; "filters" and "roots", when given, replace the site's.
type SiteEvent struct {
	Type    string `json:"type"` // always "site"
	Version int    `json:"v,omitempty"`
	Op      SiteOp `json:"op"`
	ID      string `json:"id,omitempty"`

	Roots           []string      `json:"roots,omitempty"`
	Filters         *[]SiteFilter `json:"filters,omitempty"`
	State           *string       `json:"state,omitempty"`
	Priority        *int          `json:"priority,omitempty"`
	MaxURLs         *int64        `json:"max_urls,omitempty"`
	MaxResources    *int64        `json:"max_resources,omitempty"`
	MaxErrors       *int64        `json:"max_errors,omitempty"`
	MaxResourceSize *int64        `json:"max_resource_size,omitempty"`
	MaxURLsFromPage *int64        `json:"max_urls_from_page,omitempty"`
	RequestDelayMS  *int64        `json:"request_delay_ms,omitempty"`
	HTTPTimeoutMS   *int64        `json:"http_timeout_ms,omitempty"`
	RecrawlPeriodM  *int64        `json:"recrawl_period_min,omitempty"`
	URLType         *string       `json:"url_type,omitempty"`
}

// SiteOp is what a site event does.
type SiteOp string

// The site operations.
const (
	SiteAdd     SiteOp = "add"     // create a site (its ID must be new)
	SiteSet     SiteOp = "set"     // change the fields given
	SiteDisable SiteOp = "disable" // state disabled: its URLs are held
	SiteEnable  SiteOp = "enable"  // state active; the error count starts again at 0
)

// SiteEventType is the "type" of a site event.
const SiteEventType = "site"

// MaxSiteEventBytes bounds a site event's message.
const MaxSiteEventBytes = 256 << 10

// MessageType returns the "type" of a JSON object message, "" when it
// has none or is not an object (an enqueue event has none).
func MessageType(body []byte) string {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return ""
	}
	var m struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.Type
}

// ParseSiteEvent reads a site event, refusing unknown fields, values of
// the wrong type and anything past its bound, with an error of
// KindInvalid that says what is wrong.
func ParseSiteEvent(body []byte) (SiteEvent, error) {
	const op = "parse site event"
	if len(body) > MaxSiteEventBytes {
		return SiteEvent{}, E(op, KindInvalid, fmt.Errorf("message of %d bytes, more than the %d a site event may have", len(body), MaxSiteEventBytes))
	}
	if !utf8.Valid(body) {
		return SiteEvent{}, E(op, KindInvalid, fmt.Errorf("message is not UTF-8 text"))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var ev SiteEvent
	if err := dec.Decode(&ev); err != nil {
		return SiteEvent{}, E(op, KindInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return SiteEvent{}, E(op, KindInvalid, fmt.Errorf("more than one JSON value in the message"))
	}
	if err := ev.Validate(); err != nil {
		return SiteEvent{}, E(op, KindInvalid, err)
	}
	return ev, nil
}

// Validate checks what can be checked of an event alone: its type, op,
// ID, and the values it sets (against the same bounds as Site.Validate).
func (ev SiteEvent) Validate() error {
	if ev.Type != SiteEventType {
		return fmt.Errorf(`"type" must be %q, got %q`, SiteEventType, Truncate(ev.Type, 64))
	}
	if ev.Version != 0 && ev.Version != EnqueueVersion {
		return fmt.Errorf(`"v" must be %d, got %d`, EnqueueVersion, ev.Version)
	}
	switch ev.Op {
	case SiteAdd:
		if len(ev.Roots) == 0 {
			return fmt.Errorf(`"add" needs "roots": the site's root URLs`)
		}
	case SiteSet, SiteDisable, SiteEnable:
		if ev.ID == "" {
			return fmt.Errorf(`%q needs "id"`, ev.Op)
		}
	default:
		return fmt.Errorf(`"op" must be add, set, disable or enable, got %q`, Truncate(string(ev.Op), 64))
	}
	if (ev.Op == SiteDisable || ev.Op == SiteEnable) && (len(ev.Roots) > 0 || ev.Filters != nil || ev.State != nil) {
		return fmt.Errorf(`%q takes only "id"`, ev.Op)
	}
	// The values, checked on a site made of them (the ID and the roots
	// only if given: add takes its ID from the first root).
	s := Site{ID: "x", Roots: []string{"x"}, State: SiteActive}
	if ev.ID != "" {
		s.ID = ev.ID
	}
	if len(ev.Roots) > 0 {
		s.Roots = ev.Roots
	}
	if err := ev.ApplyTo(&s); err != nil {
		return err
	}
	if ev.ID == "" {
		return s.validateValues() // no site to name yet
	}
	return s.Validate()
}

// ApplyTo sets the fields the event gives on s (not the ID, the roots or
// the state change of disable and enable: those are the caller's).
func (ev SiteEvent) ApplyTo(s *Site) error {
	if ev.Filters != nil {
		s.Filters = append([]SiteFilter(nil), (*ev.Filters)...)
	}
	if ev.State != nil {
		st, err := ParseSiteState(*ev.State)
		if err != nil {
			return err
		}
		s.State = st
	}
	if ev.URLType != nil {
		t, err := ParseURLType(*ev.URLType)
		if err != nil {
			return err
		}
		s.URLType = t
	}
	if ev.Priority != nil {
		s.Priority = *ev.Priority
	}
	for _, f := range []struct {
		v   *int64
		dst *int64
	}{
		{ev.MaxURLs, &s.MaxURLs}, {ev.MaxResources, &s.MaxResources}, {ev.MaxErrors, &s.MaxErrors},
		{ev.MaxResourceSize, &s.MaxResourceSize}, {ev.MaxURLsFromPage, &s.MaxURLsFromPage},
		{ev.RequestDelayMS, &s.RequestDelay}, {ev.HTTPTimeoutMS, &s.HTTPTimeout}, {ev.RecrawlPeriodM, &s.RecrawlPeriod},
	} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return nil
}
