package config

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestAuditRetentionConfig(t *testing.T) {
	p := testPaths(t)
	writeConfig(t, p, `{"audit":{"retentionDays":7,"maxRows":500}}`)
	c, err := Load(p)
	if err != nil || c.Validate() != nil {
		t.Fatalf("load: %v %v", err, c.Validate())
	}
	if c.Audit.MaxAge() != 7*24*time.Hour || c.Audit.Rows() != 500 {
		t.Fatalf("audit: %+v", c.Audit)
	}
	if d := Default(); d.Audit.MaxAge() != 30*24*time.Hour || d.Audit.Rows() != 100_000 {
		t.Fatalf("defaults: %v %d", d.Audit.MaxAge(), d.Audit.Rows())
	}
	// Unknown fields inside "audit" are rejected like anywhere else.
	writeConfig(t, p, `{"audit":{"retentionWeeks":7}}`)
	var pe *ParseError
	if _, err := Load(p); !errors.As(err, &pe) {
		t.Fatalf("unknown audit field: %v", err)
	}
	for _, a := range []Audit{{RetentionDays: -1}, {MaxRows: -5}, {RetentionDays: 4000}} {
		c := Default()
		c.Audit = a
		if !errors.Is(c.Validate(), ErrBadAudit) {
			t.Errorf("%+v accepted", a)
		}
	}
	if got := p.AuditDB(); got != filepath.Join(p.StateDir, "audit.db") {
		t.Fatalf("AuditDB %q", got)
	}
}
