package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// An agent item (control table, pk "agent", sk its uuid) holds seed
// 000's agent columns but agent_id: agents are keyed by uuid.
const (
	agUUID         = "agent_uuid"
	agTimeStarted  = "time_started_unix_utc"
	agTimeFinished = "time_finished_unix_utc"
	agName         = "name"
	agUserAgent    = "http_user_agent"
)

// RegisterAgent records an agent starting its work. Registering the
// same agent again changes nothing.
func (d *DB) RegisterAgent(ctx context.Context, a crawl.Agent) error {
	if a.UUID == "" {
		return crawl.E("register agent", crawl.KindInvalid, errors.New("no agent uuid"))
	}
	it := ctlKey(ctlAgent, a.UUID)
	it[agUUID] = fxS(a.UUID)
	it[agTimeStarted] = fxN(a.TimeStarted)
	it[agName] = fxS(a.Name)
	fxPutOpt(it, agUserAgent, fxOptS(a.HTTPUserAgent))
	fxPutOpt(it, agTimeFinished, fxOptN(a.TimeFinished))
	_, err := d.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(d.t.Control),
		Item:                     it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": ctlPK},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("register agent %s: %w", a.UUID, err)
	}
	return nil
}

// FinishAgent records an agent finishing its work. An agent never
// registered is left unrecorded (as in the SQLite store).
func (d *DB) FinishAgent(ctx context.Context, agentUUID string, at int64) error {
	if agentUUID == "" {
		return nil
	}
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.t.Control),
		Key:                       ctlKey(ctlAgent, agentUUID),
		UpdateExpression:          aws.String("SET #f = :f"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  map[string]string{"#f": agTimeFinished, "#pk": ctlPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":f": fxN(at)},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("finish agent %s: %w", agentUUID, err)
	}
	return nil
}

// GetAgent returns a registered agent (its ID is 0), or
// crawl.ErrNotFound.
func (d *DB) GetAgent(ctx context.Context, agentUUID string) (crawl.Agent, error) {
	if agentUUID == "" {
		return crawl.Agent{}, crawl.ErrNotFound
	}
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(d.t.Control),
		Key:            ctlKey(ctlAgent, agentUUID),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return crawl.Agent{}, fmt.Errorf("get agent %s: %w", agentUUID, err)
	}
	if len(out.Item) == 0 {
		return crawl.Agent{}, crawl.ErrNotFound
	}
	r := fxReader{m: out.Item}
	a := crawl.Agent{
		TimeStarted:   r.int(agTimeStarted),
		TimeFinished:  r.optInt(agTimeFinished),
		UUID:          r.str(agUUID),
		Name:          r.str(agName),
		HTTPUserAgent: r.optStr(agUserAgent),
	}
	if r.err != nil {
		return a, fmt.Errorf("get agent %s: %w", agentUUID, r.err)
	}
	return a, nil
}
