package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

type auditRow struct {
	ID       int64  `json:"id"`
	Session  string `json:"session"`
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

// refusedAudit checks u's audit after u's agent named other's browser and a
// missing one: both refusals are recorded for u as "refused", alike, and no
// record of u's names other's device.
func refusedAudit(t *testing.T, c *cluster, u teamUser, other *browser) {
	t.Helper()
	var raw json.RawMessage
	c.mustAPI(0, c.adminToken, http.MethodGet, "/admin/audit?user="+u.ID+"&limit=500", nil, &raw)
	refused := 0
	for _, r := range decodeList[auditRow](raw, "records") {
		if r.DeviceID == other.deviceID {
			t.Errorf("%s's audit record %d names %s's device", u.Name, r.ID, other.name)
		}
		if r.Outcome == "refused" {
			refused++
			if r.DeviceID != "" || r.UserID != u.ID || r.Code != "extension_not_connected" {
				t.Errorf("%s's refused call is recorded as %+v", u.Name, r)
			}
		}
	}
	if refused < 2 {
		t.Errorf("%s's audit has %d refused records; want the foreign and the missing browser's", u.Name, refused)
	}
}
