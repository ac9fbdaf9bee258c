package sqlite

import (
	"context"
	"strings"
	"testing"
)

// TestQueryPlans: the queries run once per page summarized read what
// they need through an index, never every open generation (which made a
// crawl's time grow with the square of its pages).
func TestQueryPlans(t *testing.T) {
	d := openTest(t)
	for _, tt := range []struct {
		name  string
		query string
		args  []any
		uses  []string // index names the plan must use
		sorts bool     // whether the plan may sort what it reads
	}{
		{"near original", nearOriginalQuery, []any{1, 2, 3, 4, "http://example.com/"},
			[]string{"text_pile_simhash_band0", "text_pile_simhash_band3", "entity_generation_by_text_pile"}, true},
		{"due candidates", "SELECT f.url_id" + candidateFrom + dueWhere, []any{1000, 16},
			[]string{"crawl_frontier_release"}, false},
		{"body by hash", bodyKeyOfQuery, []any{"ab"}, []string{"file_body_by_sha256"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := d.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+tt.query, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			all := strings.Join(plan, "\n")
			for _, ix := range tt.uses {
				if !strings.Contains(all, ix) {
					t.Errorf("plan does not use %s:\n%s", ix, all)
				}
			}
			if !tt.sorts && strings.Contains(all, "TEMP B-TREE") {
				t.Errorf("plan sorts every row it reads:\n%s", all)
			}
			for _, line := range plan {
				if strings.HasPrefix(line, "SCAN ") || strings.Contains(line, "entity_generation_by_active") {
					t.Errorf("plan walks a whole table or every open generation (%q):\n%s", line, all)
				}
			}
		})
	}
}
