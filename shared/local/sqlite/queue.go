package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Message is a message received from a queue.
type Message struct {
	ID           string
	Body         []byte
	ReceiveCount int
	seq          int64 // the message's order in its queue
}

// Send appends messages to a queue, in one transaction. An empty body or
// one over crawl.MaxMessageBytes is refused (crawl.CheckMessages), and
// then nothing of the call is sent.
func (d *DB) Send(ctx context.Context, queue string, bodies ...[]byte) error {
	if len(bodies) == 0 {
		return nil
	}
	if err := crawl.CheckMessages(queue, bodies); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	return d.tx(ctx, func(ctx context.Context, tx *wtx) error {
		for _, b := range bodies {
			if _, err := tx.ExecContext(ctx, `INSERT INTO queue_message(queue, body, visible_at_ms) VALUES(?,?,?)`, queue, b, now); err != nil {
				return fmt.Errorf("send to %s: %w", queue, err)
			}
		}
		return nil
	})
}

// Receive takes up to max visible messages from a queue, those visible
// first first (then the oldest), returns them oldest first, and hides
// them for the lease: one not deleted by then is received again. That
// order is the index's (queue_message_visible), so a receive reads only
// the rows it takes; in order of message_id it sorted every visible
// message of the queue, each time.
func (d *DB) Receive(ctx context.Context, queue string, max int, lease time.Duration) ([]Message, error) {
	var out []Message
	now := time.Now()
	err := d.tx(ctx, func(ctx context.Context, tx *wtx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `UPDATE queue_message SET visible_at_ms=?, receive_count=receive_count+1
			WHERE message_id IN (SELECT message_id FROM queue_message WHERE queue=? AND visible_at_ms<=? ORDER BY visible_at_ms, message_id LIMIT ?)
			RETURNING message_id, body, receive_count`, now.Add(lease).UnixMilli(), queue, now.UnixMilli(), max)
		if err != nil {
			return fmt.Errorf("receive from %s: %w", queue, err)
		}
		defer rows.Close()
		for rows.Next() {
			var m Message
			if err := rows.Scan(&m.seq, &m.Body, &m.ReceiveCount); err != nil {
				return fmt.Errorf("scan message: %w", err)
			}
			m.ID = strconv.FormatInt(m.seq, 10)
			out = append(out, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	// RETURNING gives the rows in no set order: oldest first.
	slices.SortFunc(out, func(a, b Message) int { return cmp.Compare(a.seq, b.seq) })
	return out, nil
}

// Waiting reports whether a queue has a visible message, from a read
// connection: the writer is not asked.
func (d *DB) Waiting(ctx context.Context, queue string) (bool, error) {
	var waiting bool
	if err := d.queryRow(ctx, `SELECT EXISTS(SELECT 1 FROM queue_message WHERE queue=? AND visible_at_ms<=?)`,
		queue, time.Now().UnixMilli()).Scan(&waiting); err != nil {
		return false, fmt.Errorf("look at %s: %w", queue, err)
	}
	return waiting, nil
}

// Delete removes received messages: they have been handled.
func (d *DB) Delete(ctx context.Context, queue string, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	err := d.tx(ctx, func(ctx context.Context, tx *wtx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM queue_message WHERE queue=? AND message_id=?`, queue, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete %d messages from %s: %w", len(ids), queue, err)
	}
	return nil
}

// Retry makes a received message visible again after delay.
func (d *DB) Retry(ctx context.Context, queue, id string, delay time.Duration) error {
	if _, err := d.exec(ctx, `UPDATE queue_message SET visible_at_ms=? WHERE queue=? AND message_id=?`,
		time.Now().Add(delay).UnixMilli(), queue, id); err != nil {
		return fmt.Errorf("retry message %s of %s: %w", id, queue, err)
	}
	return nil
}

// DeadLetter moves a message to the queue's dead-letter queue
// (queue + "-dlq") with the reason it could not be handled.
func (d *DB) DeadLetter(ctx context.Context, queue, id, reason string) error {
	// A dead letter's visible_at_ms is when it was dead-lettered: nothing
	// receives from a dead-letter queue (DeadLetterCounts).
	if _, err := d.exec(ctx, `UPDATE queue_message SET queue=?, reason=?, visible_at_ms=? WHERE queue=? AND message_id=?`,
		DeadLetterQueue(queue), reason, time.Now().UnixMilli(), queue, id); err != nil {
		return fmt.Errorf("dead-letter message %s of %s: %w", id, queue, err)
	}
	return nil
}

// DeadLetterCounts counts the messages in the named queues' dead-letter
// queues: those dead-lettered since the time given, and all of them
// (those of versions before 2026-11-30 carry no time: only in all).
func (d *DB) DeadLetterCounts(ctx context.Context, since time.Time, queues ...string) (recent, all int, err error) {
	for _, q := range queues {
		var r, a int
		if err := d.db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE visible_at_ms >= ?), count(*) FROM queue_message WHERE queue=?`,
			since.UnixMilli(), DeadLetterQueue(q)).Scan(&r, &a); err != nil {
			return 0, 0, fmt.Errorf("count dead letters of %s: %w", q, err)
		}
		recent, all = recent+r, all+a
	}
	return recent, all, nil
}

// DeadLetterQueue names a queue's dead-letter queue.
func DeadLetterQueue(queue string) string { return queue + "-dlq" }

// DeadLetters returns the bodies and reasons in a queue's dead-letter queue.
func (d *DB) DeadLetters(ctx context.Context, queue string) ([][2]string, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT body, coalesce(reason,'') FROM queue_message WHERE queue=? ORDER BY message_id`, DeadLetterQueue(queue))
	if err != nil {
		return nil, fmt.Errorf("read dead letters of %s: %w", queue, err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var b []byte
		var r string
		if err := rows.Scan(&b, &r); err != nil {
			return nil, err
		}
		out = append(out, [2]string{string(b), r})
	}
	return out, rows.Err()
}

// Pending counts the messages in the named queues, visible or leased.
func (d *DB) Pending(ctx context.Context, queues ...string) (int, error) {
	if len(queues) == 0 {
		return 0, nil
	}
	args := make([]any, len(queues))
	for i, q := range queues {
		args[i] = q
	}
	var n int
	q := `SELECT count(*) FROM queue_message WHERE queue IN (?` + strings.Repeat(",?", len(queues)-1) + `)`
	st, err := d.prepared(ctx, q)
	if err == nil {
		err = st.QueryRowContext(ctx, args...).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("count pending messages: %w", err)
	}
	return n, nil
}

// ReleaseLeases makes every leased message of the named queues visible
// now: the process that held the leases is gone.
func (d *DB) ReleaseLeases(ctx context.Context, queues ...string) error {
	for _, q := range queues {
		if _, err := d.exec(ctx, `UPDATE queue_message SET visible_at_ms=0 WHERE queue=?`, q); err != nil {
			return fmt.Errorf("release leases of %s: %w", q, err)
		}
	}
	return nil
}

// AddDeadLetter puts a message that could not be handled, taken from a
// queue kept elsewhere (the pipeline's in-memory fetch queue), into
// queue's dead-letter queue with its reason, as DeadLetter does for a
// message of the database's own.
func (d *DB) AddDeadLetter(ctx context.Context, queue string, body []byte, receives int, reason string) error {
	if _, err := d.exec(ctx, `INSERT INTO queue_message(queue, body, visible_at_ms, receive_count, reason) VALUES(?,?,?,?,?)`,
		DeadLetterQueue(queue), body, time.Now().UnixMilli(), receives, reason); err != nil {
		return fmt.Errorf("dead-letter a message of %s: %w", queue, err)
	}
	return nil
}

// Bodies returns the bodies of every message of a queue, visible or
// not.
func (d *DB) Bodies(ctx context.Context, queue string) ([][]byte, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT body FROM queue_message WHERE queue=? ORDER BY message_id`, queue)
	if err != nil {
		return nil, fmt.Errorf("read the messages of %s: %w", queue, err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("read the messages of %s: %w", queue, err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Purge deletes every message of a queue (not of its dead-letter
// queue) and returns how many there were.
func (d *DB) Purge(ctx context.Context, queue string) (int64, error) {
	res, err := d.exec(ctx, `DELETE FROM queue_message WHERE queue=?`, queue)
	if err != nil {
		return 0, fmt.Errorf("purge %s: %w", queue, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
