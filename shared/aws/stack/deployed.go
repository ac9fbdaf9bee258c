package stack

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
)

// The stack outputs (template.yaml's Outputs) that the CLI and the
// end-to-end test read.
const (
	OutEnqueueQueue = "EnqueueQueueUrl"
	OutCandidates   = "CandidatesTableName"
	OutCrawlLog     = "CrawlLogTableName"
	OutGenerations  = "GenerationsTableName"
	OutControl      = "ControlTableName"
	OutBucket       = "BodiesBucketName"
)

// Deployed is a deployed stack as CloudFormation describes it.
type Deployed struct {
	Name       string
	Outputs    map[string]string
	Parameters map[string]string
}

// StackDescriber is the CloudFormation call Describe makes.
type StackDescriber interface {
	DescribeStacks(ctx context.Context, in *cloudformation.DescribeStacksInput, opts ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
}

// Describe reads a deployed stack's outputs and parameters.
func Describe(ctx context.Context, cfn StackDescriber, name string) (Deployed, error) {
	out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return Deployed{}, fmt.Errorf("describe stack %s: %w", name, err)
	}
	if len(out.Stacks) == 0 {
		return Deployed{}, fmt.Errorf("stack %s not found", name)
	}
	d := Deployed{Name: name, Outputs: map[string]string{}, Parameters: map[string]string{}}
	for _, o := range out.Stacks[0].Outputs {
		d.Outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	for _, p := range out.Stacks[0].Parameters {
		d.Parameters[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	return d, nil
}

// Tables returns the stack's table names, or an error when the stack
// has none: it is not the crawler's stack.
func (d Deployed) Tables() (dynamo.Tables, error) {
	t := dynamo.Tables{Candidates: d.Outputs[OutCandidates], CrawlLog: d.Outputs[OutCrawlLog],
		Generations: d.Outputs[OutGenerations], Control: d.Outputs[OutControl]}
	if t.Candidates == "" || t.Generations == "" {
		return t, fmt.Errorf("stack %s has no %s/%s outputs: is it the crawler's stack?", d.Name, OutCandidates, OutGenerations)
	}
	return t, nil
}
