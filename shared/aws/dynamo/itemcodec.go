package dynamo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Items are written and read by hand rather than through struct tags:
// the attribute names are the seeds' column names, absent attributes
// are the seeds' Nulls, and what is absent must be REMOVEd on update.

func fxS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func fxN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// fxF is a number attribute of a float (seed 001 MRate).
func fxF(f float64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatFloat(f, 'g', -1, 64)}
}

func fxBool(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

// fxOptN is nil (absent) for a nil pointer.
func fxOptN(p *int64) types.AttributeValue {
	if p == nil {
		return nil
	}
	return fxN(*p)
}

// fxOptS is nil (absent) for a nil pointer; an empty string is kept.
func fxOptS(p *string) types.AttributeValue {
	if p == nil {
		return nil
	}
	return fxS(*p)
}

// fxNonEmpty is nil (absent) for "".
func fxNonEmpty(s string) types.AttributeValue {
	if s == "" {
		return nil
	}
	return fxS(s)
}

// fxPutOpt sets m[k] = v unless v is nil.
func fxPutOpt(m map[string]types.AttributeValue, k string, v types.AttributeValue) {
	if v != nil {
		m[k] = v
	}
}

// fxExpr holds the placeholders of one request's expressions (an
// update and its condition share them): every attribute name goes
// through ExpressionAttributeNames (url, state and host are DynamoDB
// reserved words), a dotted path getting one placeholder per element,
// and every value through ExpressionAttributeValues.
type fxExpr struct {
	names  map[string]string
	byName map[string]string
	values map[string]types.AttributeValue
}

// name returns the placeholder of an attribute name or dotted path.
func (e *fxExpr) name(path string) string {
	if e.names == nil {
		e.names, e.byName = map[string]string{}, map[string]string{}
	}
	parts := strings.Split(path, ".")
	for i, p := range parts {
		ph, ok := e.byName[p]
		if !ok {
			ph = "#n" + strconv.Itoa(len(e.byName))
			e.byName[p], e.names[ph] = ph, p
		}
		parts[i] = ph
	}
	return strings.Join(parts, ".")
}

// value returns a new placeholder for v.
func (e *fxExpr) value(v types.AttributeValue) string {
	if e.values == nil {
		e.values = map[string]types.AttributeValue{}
	}
	p := ":v" + strconv.Itoa(len(e.values))
	e.values[p] = v
	return p
}

// Names and Values return the maps for the request (nil when empty, as
// DynamoDB requires).
func (e *fxExpr) Names() map[string]string {
	if len(e.names) == 0 {
		return nil
	}
	return e.names
}

// Values: see Names.
func (e *fxExpr) Values() map[string]types.AttributeValue {
	if len(e.values) == 0 {
		return nil
	}
	return e.values
}

// fxUpdate builds an UpdateExpression of SET, REMOVE and ADD clauses
// over its fxExpr's placeholders.
type fxUpdate struct {
	*fxExpr
	sets, removes, adds []string
}

// newUpdate returns an update over e's placeholders (new ones when e is
// nil).
func newUpdate(e *fxExpr) *fxUpdate {
	if e == nil {
		e = &fxExpr{}
	}
	return &fxUpdate{fxExpr: e}
}

func (u *fxUpdate) set(attr string, v types.AttributeValue) {
	u.sets = append(u.sets, u.name(attr)+" = "+u.value(v))
}

// setFrom sets attr to the item's from attribute as it was before the
// update, or to 0 when it had none.
func (u *fxUpdate) setFrom(attr, from string) {
	u.sets = append(u.sets, u.name(attr)+" = if_not_exists("+u.name(from)+", "+u.value(fxN(0))+")")
}

// setOpt sets attr to v, or removes attr when v is nil.
func (u *fxUpdate) setOpt(attr string, v types.AttributeValue) {
	if v == nil {
		u.remove(attr)
		return
	}
	u.set(attr, v)
}

func (u *fxUpdate) remove(attr string) { u.removes = append(u.removes, u.name(attr)) }

func (u *fxUpdate) add(attr string, v types.AttributeValue) {
	u.adds = append(u.adds, u.name(attr)+" "+u.value(v))
}

func (u *fxUpdate) expression() string {
	var parts []string
	if len(u.sets) > 0 {
		parts = append(parts, "SET "+strings.Join(u.sets, ", "))
	}
	if len(u.removes) > 0 {
		parts = append(parts, "REMOVE "+strings.Join(u.removes, ", "))
	}
	if len(u.adds) > 0 {
		parts = append(parts, "ADD "+strings.Join(u.adds, ", "))
	}
	return strings.Join(parts, " ")
}

// fxReader reads attributes of an item, keeping the first error.
type fxReader struct {
	m   map[string]types.AttributeValue
	err error
}

func (r *fxReader) fail(k string, v types.AttributeValue, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("attribute %s is %T, want %s", k, v, want)
	}
}

// nested keeps the first error of a reader of a map inside attribute k.
func (r *fxReader) nested(k string, in fxReader) {
	if r.err == nil && in.err != nil {
		r.err = fmt.Errorf("in %s: %w", k, in.err)
	}
}

// str returns a string attribute, "" when absent.
func (r *fxReader) str(k string) string {
	p := r.optStr(k)
	if p == nil {
		return ""
	}
	return *p
}

func (r *fxReader) optStr(k string) *string {
	v, ok := r.m[k]
	if !ok {
		return nil
	}
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		r.fail(k, v, "S")
		return nil
	}
	return &s.Value
}

// int returns a number attribute, 0 when absent.
func (r *fxReader) int(k string) int64 {
	p := r.optInt(k)
	if p == nil {
		return 0
	}
	return *p
}

// float returns a number attribute as a float, 0 when absent.
func (r *fxReader) float(k string) float64 {
	v, ok := r.m[k]
	if !ok {
		return 0
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		r.fail(k, v, "N")
		return 0
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		err = fmt.Errorf("%q is not a finite number", n.Value)
	}
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("attribute %s: %w", k, err)
		}
		return 0
	}
	return f
}

func (r *fxReader) optInt(k string) *int64 {
	v, ok := r.m[k]
	if !ok {
		return nil
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		r.fail(k, v, "N")
		return nil
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("attribute %s: %w", k, err)
		}
		return nil
	}
	return &i
}

func (r *fxReader) optIntAsInt(k string) *int {
	p := r.optInt(k)
	if p == nil {
		return nil
	}
	i := int(*p)
	return &i
}

// bool returns a BOOL attribute, false when absent.
func (r *fxReader) bool(k string) bool {
	v, ok := r.m[k]
	if !ok {
		return false
	}
	b, ok := v.(*types.AttributeValueMemberBOOL)
	if !ok {
		r.fail(k, v, "BOOL")
		return false
	}
	return b.Value
}

// strList returns a list of strings, nil when absent or empty.
func (r *fxReader) strList(k string) []string {
	v, ok := r.m[k]
	if !ok {
		return nil
	}
	l, ok := v.(*types.AttributeValueMemberL)
	if !ok {
		r.fail(k, v, "L")
		return nil
	}
	var out []string
	for _, e := range l.Value {
		s, ok := e.(*types.AttributeValueMemberS)
		if !ok {
			r.fail(k, e, "L of S")
			return nil
		}
		out = append(out, s.Value)
	}
	return out
}

// maps returns a list of maps, nil when absent or empty.
func (r *fxReader) maps(k string) []map[string]types.AttributeValue {
	v, ok := r.m[k]
	if !ok {
		return nil
	}
	l, ok := v.(*types.AttributeValueMemberL)
	if !ok {
		r.fail(k, v, "L")
		return nil
	}
	var out []map[string]types.AttributeValue
	for _, e := range l.Value {
		m, ok := e.(*types.AttributeValueMemberM)
		if !ok {
			r.fail(k, e, "L of M")
			return nil
		}
		out = append(out, m.Value)
	}
	return out
}

// mapAttr returns a map attribute, nil when absent.
func (r *fxReader) mapAttr(k string) map[string]types.AttributeValue {
	v, ok := r.m[k]
	if !ok {
		return nil
	}
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		r.fail(k, v, "M")
		return nil
	}
	return m.Value
}

// fxReadS reads one string attribute of an item, "" when absent.
func fxReadS(m map[string]types.AttributeValue, k string) (string, error) {
	r := fxReader{m: m}
	v := r.str(k)
	return v, r.err
}

// fxReadN reads one number attribute of an item, 0 when absent.
func fxReadN(m map[string]types.AttributeValue, k string) (int64, error) {
	r := fxReader{m: m}
	n := r.int(k)
	return n, r.err
}
