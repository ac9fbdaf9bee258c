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

// The control table is keyed (pk, sk). Its item kinds:
//
//	pk="scope",        sk=host   the crawl's scope (seed hosts); also: host
//	pk="site-host",    sk=host   a host that has been a site root's (duepartition.go)
//	pk="agent",        sk=uuid   an agent (seed 000 agent columns)
//	pk="host#"+host,   sk="gate" a host's politeness gate (see Gate)
//	pk="released",     sk=time#uuid  a release record (released.go)
const (
	ctlPK = "pk"
	ctlSK = "sk"

	ctlHost     = "host"
	ctlScope    = "scope"
	ctlSiteHost = "site-host"
	ctlAgent    = "agent"
)

// AddScopeHost puts a host in the crawl's scope. Adding it again changes
// nothing.
func (d *DB) AddScopeHost(ctx context.Context, host string) error {
	if host == "" {
		return crawl.E("add scope host", crawl.KindInvalid, errors.New("empty host"))
	}
	if err := d.addHost(ctx, ctlScope, host); err != nil {
		return fmt.Errorf("add scope host %s: %w", host, err)
	}
	return nil
}

// addHost puts host in the set of hosts under pk.
func (d *DB) addHost(ctx context.Context, pk, host string) error {
	_, err := d.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(d.t.Control),
		Item:      map[string]types.AttributeValue{ctlPK: fxS(pk), ctlSK: fxS(host), ctlHost: fxS(host)},
	})
	return err
}

// InScope reports whether host is in the crawl's scope.
func (d *DB) InScope(ctx context.Context, host string) (bool, error) {
	in, err := d.hasHost(ctx, ctlScope, host)
	if err != nil {
		return false, fmt.Errorf("scope of %s: %w", host, err)
	}
	return in, nil
}

// hasHost reports whether host is in the set of hosts under pk.
func (d *DB) hasHost(ctx context.Context, pk, host string) (bool, error) {
	if host == "" {
		return false, nil // not a valid key, and never in a set
	}
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:            aws.String(d.t.Control),
		Key:                  ctlKey(pk, host),
		ConsistentRead:       aws.Bool(true),
		ProjectionExpression: aws.String(ctlPK),
	})
	if err != nil {
		return false, err
	}
	return len(out.Item) > 0, nil
}

// ScopeHosts returns the hosts in the crawl's scope, in byte order.
func (d *DB) ScopeHosts(ctx context.Context) ([]string, error) {
	hosts, err := d.hosts(ctx, ctlScope)
	if err != nil {
		return nil, fmt.Errorf("read scope: %w", err)
	}
	return hosts, nil
}

// hosts returns the set of hosts under pk, in byte order.
func (d *DB) hosts(ctx context.Context, pk string) ([]string, error) {
	var out []string
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.t.Control),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": ctlPK, "#sk": ctlSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": fxS(pk)},
		ProjectionExpression:      aws.String("#sk"),
		ConsistentRead:            aws.Bool(true),
	}
	for {
		page, err := d.api.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			r := fxReader{m: it}
			out = append(out, r.str(ctlSK))
			if r.err != nil {
				return nil, r.err
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

func ctlKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{ctlPK: fxS(pk), ctlSK: fxS(sk)}
}
