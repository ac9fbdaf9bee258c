package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// RegisterAgent records an agent starting its work.
func (d *DB) RegisterAgent(ctx context.Context, a crawl.Agent) error {
	if a.UUID == "" {
		return crawl.E("register agent", crawl.KindInvalid, errors.New("no agent uuid"))
	}
	_, err := d.exec(ctx,
		`INSERT INTO agent(time_started_unix_utc, agent_uuid, name, http_user_agent) VALUES(?,?,?,?)
		 ON CONFLICT(agent_uuid) DO NOTHING`,
		a.TimeStarted, a.UUID, a.Name, a.HTTPUserAgent)
	if err != nil {
		return fmt.Errorf("register agent %s: %w", a.UUID, err)
	}
	return nil
}

// FinishAgent records an agent finishing its work.
func (d *DB) FinishAgent(ctx context.Context, agentUUID string, at int64) error {
	_, err := d.exec(ctx, `UPDATE agent SET time_finished_unix_utc=? WHERE agent_uuid=?`, at, agentUUID)
	if err != nil {
		return fmt.Errorf("finish agent %s: %w", agentUUID, err)
	}
	return nil
}
