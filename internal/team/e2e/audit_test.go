package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

type auditRow struct {
	ID       int64  `json:"id"`
	Tool     string `json:"tool"`
	Outcome  string `json:"outcome"`
	Code     string `json:"code"`
	UserID   string `json:"userId"`
	DeviceID string `json:"deviceId"`
	Replica  string `json:"replica"`
}

// checkAudit reads the whole audit through the admin API of a live replica
// and checks that every call that ran, or may have, has its record, and
// that every record of a browser belongs to that browser's user.
func checkAudit(t *testing.T, c *cluster, calls *callLog, owner map[string]string) {
	t.Helper()
	live := -1
	for i := range c.replicas {
		if c.alive(i) {
			live = i
			break
		}
	}
	var rows []auditRow
	after := int64(0)
	for {
		var raw json.RawMessage
		c.mustAPI(live, c.adminToken, http.MethodGet, fmt.Sprintf("/admin/audit?after=%d&limit=500", after), nil, &raw)
		page := decodeList[auditRow](raw, "records")
		if len(page) == 0 || page[len(page)-1].ID <= after {
			break
		}
		rows = append(rows, page...)
		after = page[len(page)-1].ID
	}
	type key struct{ device, tool string }
	have := map[key]int{}
	for _, r := range rows {
		have[key{r.DeviceID, r.Tool}]++
		if want, ok := owner[r.DeviceID]; ok && r.UserID != want {
			t.Errorf("audit record %d: a call by user %s on device %s, which belongs to %s", r.ID, r.UserID, r.DeviceID, want)
		}
	}
	need := map[key]int{}
	for _, cl := range calls.all() {
		if !cl.isError || cl.mayHaveRun {
			need[key{cl.device, cl.tool}]++
		}
	}
	for k, n := range need {
		if have[k] < n {
			t.Errorf("audit: %d replies for %s on %s, but %d records", n, k.tool, k.device, have[k])
		}
	}
	t.Logf("audit: %d records cover the %d calls that ran or may have", len(rows), len(calls.all()))
}
