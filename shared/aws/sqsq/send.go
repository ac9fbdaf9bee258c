package sqsq

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Send sends each body as a message, in batch calls of at most MaxBatch
// messages and MaxPayload bytes. A body SQS would refuse (empty, over
// MaxPayload, or with a character outside XML's) is an error of kind
// crawl.KindInvalid, and then nothing is sent. Otherwise an error says how
// many messages were not sent; those before it were, so a caller that
// sends again may deliver some twice (SQS delivers at least once anyway).
func (q *Queue) Send(ctx context.Context, bodies ...[]byte) error {
	return q.send(ctx, "send", func(int) int32 { return 0 }, bodies)
}

// SendDelayed is Send with each message hidden for delay (rounded up to
// whole seconds, at most MaxDelay) before it can be received.
func (q *Queue) SendDelayed(ctx context.Context, delay time.Duration, bodies ...[]byte) error {
	return q.send(ctx, "send delayed", func(int) int32 { return seconds(delay, MaxDelay) }, bodies)
}

// Delayed is a message to send with a delay of its own.
type Delayed struct {
	Body  []byte
	Delay time.Duration
}

// SendEach is Send with each message hidden for its own Delay (rounded
// up to whole seconds, at most MaxDelay). SendMessageBatch takes a delay
// per entry, so messages of different delays still go ten to a call.
func (q *Queue) SendEach(ctx context.Context, msgs ...Delayed) error {
	bodies := make([][]byte, len(msgs))
	for i, m := range msgs {
		bodies[i] = m.Body
	}
	return q.send(ctx, "send delayed", func(i int) int32 { return seconds(msgs[i].Delay, MaxDelay) }, bodies)
}

// SendWithAttributes sends one message with string message attributes,
// which a receiver finds in Message.Attributes: how a message goes to a
// dead-letter queue with its reason and source queue.
func (q *Queue) SendWithAttributes(ctx context.Context, body []byte, attrs map[string]string) error {
	op := "send to " + q.name
	body = escaped(body)
	size := len(body)
	ma := make(map[string]types.MessageAttributeValue, len(attrs))
	for k, v := range attrs {
		if k == "" || v == "" {
			return crawl.Errorf(crawl.KindInvalid, "%s: message attribute %q=%q: SQS refuses an empty name or value", op, k, v)
		}
		if i, r, ok := refused(v); !ok {
			return crawl.Errorf(crawl.KindInvalid, "%s: message attribute %q has %U at byte %d, which SQS refuses (AttributeValue)", op, k, r, i)
		}
		ma[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		size += len(k) + len("String") + len(v)
	}
	if len(attrs) > 10 {
		return crawl.Errorf(crawl.KindInvalid, "%s: %d message attributes, SQS takes at most 10", op, len(attrs))
	}
	if err := checkBody(body, q.maxBody); err != nil {
		return crawl.E(op, crawl.KindInvalid, err)
	}
	if size > q.maxBody {
		return crawl.Errorf(crawl.KindInvalid, "%s: message of %d bytes with its attributes is over the %d-byte limit", op, size, q.maxBody)
	}
	q.counts.Sends.Add(1)
	q.counts.bill(size)
	if _, err := q.api.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:          aws.String(q.url),
		MessageBody:       aws.String(string(body)),
		MessageAttributes: ma,
	}); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	q.counts.Sent.Add(1)
	return nil
}

// Check says, as Send would, whether SQS would refuse one of bodies: an
// error of kind crawl.KindInvalid, or nil. A sender that sends later
// (sqsbatch.Gather) checks at once, so that the caller still learns it.
func (q *Queue) Check(bodies ...[]byte) error {
	return q.check("send to "+q.name, bodies)
}

func (q *Queue) check(op string, bodies [][]byte) error {
	for i, b := range bodies {
		if err := checkBody(escaped(b), q.maxBody); err != nil {
			return crawl.E(fmt.Sprintf("%s: message %d of %d (nothing sent)", op, i+1, len(bodies)), crawl.KindInvalid, err)
		}
	}
	return nil
}

// send sends bodies, the i-th with delay(i) seconds.
func (q *Queue) send(ctx context.Context, op string, delay func(i int) int32, bodies [][]byte) error {
	op += " to " + q.name
	if err := q.check(op, bodies); err != nil {
		return err
	}
	bodies = slices.Clone(bodies)
	for i, b := range bodies {
		bodies[i] = escaped(b)
	}
	sent, off := 0, 0
	for _, batch := range batches(bodies) {
		first := off
		n, err := q.sendBatch(ctx, func(i int) int32 { return delay(first + i) }, batch)
		sent += n
		off += len(batch)
		if err != nil {
			return wrapKind(err, "%s: %d of %d messages not sent", op, len(bodies)-sent, len(bodies))
		}
	}
	return nil
}

// batches splits bodies, in order, into runs of at most MaxBatch bodies
// and MaxPayload bytes.
func batches(bodies [][]byte) [][][]byte {
	var out [][][]byte
	start, size := 0, 0
	for i, b := range bodies {
		if i > start && (i-start == MaxBatch || size+len(b) > MaxPayload) {
			out = append(out, bodies[start:i])
			start, size = i, 0
		}
		size += len(b)
	}
	if start < len(bodies) {
		out = append(out, bodies[start:])
	}
	return out
}

// sendBatch sends one batch, retrying entries that failed through no
// fault of ours, and returns how many messages SQS accepted.
func (q *Queue) sendBatch(ctx context.Context, delay func(i int) int32, batch [][]byte) (int, error) {
	return q.retryBatch(ctx, len(batch), func(ids []int) ([]string, []types.BatchResultErrorEntry, error) {
		in := &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.url), Entries: make([]types.SendMessageBatchRequestEntry, len(ids))}
		size := 0
		for j, i := range ids {
			in.Entries[j] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(batch[i])), DelaySeconds: delay(i)}
			size += len(batch[i])
		}
		q.counts.Sends.Add(1)
		q.counts.bill(size)
		out, err := q.api.SendMessageBatch(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		ok := make([]string, len(out.Successful))
		for j, e := range out.Successful {
			ok[j] = aws.ToString(e.Id)
		}
		q.counts.Sent.Add(int64(len(ok)))
		return ok, out.Failed, nil
	})
}

// retryBatch runs call for the entries 0..n-1 of a batch, then again for
// those that failed through no fault of the sender, up to q.attempts
// times with doubling backoff. It returns how many entries succeeded and,
// if any did not, an error naming how many and why: of kind
// crawl.KindInvalid if SQS blamed the request for every one, else
// crawl.KindTransient. An entry missing from both lists of the answer
// counts as failed.
func (q *Queue) retryBatch(ctx context.Context, n int, call func(ids []int) (ok []string, failed []types.BatchResultErrorEntry, err error)) (int, error) {
	pending := make([]int, n)
	for i := range pending {
		pending[i] = i
	}
	done := 0
	var permanent []types.BatchResultErrorEntry
	var transient []types.BatchResultErrorEntry
	wait := q.backoff
	for attempt := 1; ; attempt++ {
		ok, failed, err := call(pending)
		if err != nil {
			return done, err
		}
		settled := make(map[string]bool, len(pending))
		for _, id := range ok {
			if !settled[id] && contains(pending, id) {
				settled[id] = true
				done++
			}
		}
		transient = transient[:0]
		var retry []int
		for _, f := range failed {
			id := aws.ToString(f.Id)
			if settled[id] || !contains(pending, id) {
				continue
			}
			settled[id] = true
			if f.SenderFault {
				permanent = append(permanent, f)
				continue
			}
			transient = append(transient, f)
			i, _ := strconv.Atoi(id)
			retry = append(retry, i)
		}
		for _, i := range pending {
			if id := strconv.Itoa(i); !settled[id] {
				transient = append(transient, types.BatchResultErrorEntry{Id: aws.String(id), Code: aws.String("Missing"), Message: aws.String("entry in neither the successful nor the failed list")})
				retry = append(retry, i)
			}
		}
		if len(retry) == 0 || attempt >= q.attempts {
			break
		}
		sort.Ints(retry)
		pending = retry
		select {
		case <-ctx.Done():
			return done, fmt.Errorf("%d entries still failing: %w", len(retry), ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
	if len(permanent)+len(transient) == 0 {
		return done, nil
	}
	kind := crawl.KindInvalid
	msg := fmt.Sprintf("%d failed", len(permanent)+len(transient))
	if len(transient) > 0 {
		kind = crawl.KindTransient
		msg += fmt.Sprintf(" (%d still failing after %d attempts)", len(transient), q.attempts)
	}
	return done, crawl.Errorf(kind, "%s: %s", msg, reasons(append(permanent, transient...)))
}

func contains(ids []int, id string) bool {
	i, err := strconv.Atoi(id)
	if err != nil {
		return false
	}
	for _, j := range ids {
		if i == j {
			return true
		}
	}
	return false
}

// reasons summarizes failed entries by code and message, most frequent
// first.
func reasons(failed []types.BatchResultErrorEntry) string {
	count := map[string]int{}
	for _, f := range failed {
		r := aws.ToString(f.Code)
		if m := aws.ToString(f.Message); m != "" {
			r += " " + strconv.Quote(m)
		}
		if f.SenderFault {
			r += " (sender fault)"
		}
		count[r]++
	}
	rs := make([]string, 0, len(count))
	for r := range count {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool {
		if count[rs[i]] != count[rs[j]] {
			return count[rs[i]] > count[rs[j]]
		}
		return rs[i] < rs[j]
	})
	for i, r := range rs {
		rs[i] = fmt.Sprintf("%d× %s", count[r], r)
	}
	return strings.Join(rs, "; ")
}

// wrapKind wraps err with a formatted operation, keeping err's kind.
func wrapKind(err error, format string, args ...any) error {
	return crawl.E(fmt.Sprintf(format, args...), crawl.KindOf(err), err)
}

// checkBody reports why SQS would refuse body, if it would: SQS takes 1
// to max (the queue's MaximumMessageSize) bytes of #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD |
// #x10000-#x10FFFF, as UTF-8.
func checkBody(b []byte, max int) error {
	if len(b) == 0 {
		return fmt.Errorf("empty body: SQS needs at least one character")
	}
	if len(b) > max {
		return fmt.Errorf("body of %d bytes is over the %d-byte limit", len(b), max)
	}
	if i, r, ok := refused(string(b)); !ok {
		if r == utf8.RuneError {
			return fmt.Errorf("body is not UTF-8 at byte %d", i)
		}
		return fmt.Errorf("body has %U at byte %d, which SQS refuses", r, i)
	}
	return nil
}

// nonchars are U+FFFE and U+FFFF in UTF-8: characters SQS refuses, which
// Go's JSON encoder writes as they are. A page's text or a server's
// header can hold them.
var nonchars = [2][]byte{[]byte("\uFFFE"), []byte("\uFFFF")}

// escaped returns b with U+FFFE and U+FFFF written as JSON escapes when b
// is JSON, which reads back the same: in JSON they can only be inside
// strings. Any other body is returned as it is.
func escaped(b []byte) []byte {
	if !bytes.Contains(b, nonchars[0]) && !bytes.Contains(b, nonchars[1]) || !json.Valid(b) {
		return b
	}
	b = bytes.ReplaceAll(b, nonchars[0], []byte(`\ufffe`))
	return bytes.ReplaceAll(b, nonchars[1], []byte(`\uffff`))
}

// refused finds the first character of s SQS refuses in a body or a
// string attribute (see checkBody): its byte offset and the rune
// (utf8.RuneError for a byte that is not UTF-8), and ok when there is
// none.
func refused(s string) (at int, r rune, ok bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !allowed(r) {
			return i, r, false
		}
		i += n
	}
	return 0, 0, true
}

func allowed(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// AttributeValue makes text a string attribute value SQS takes: each
// character it refuses (and each byte that is not UTF-8) becomes U+FFFD,
// and the result is cut to at most max bytes, at a character's start.
// Error messages carry what a crawled page or a user wrote, and a dead
// letter's reason must not be refused for it.
func AttributeValue(text string, max int) string {
	var b strings.Builder
	for _, r := range text {
		if !allowed(r) {
			r = utf8.RuneError
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
