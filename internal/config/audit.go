package config

import (
	"errors"
	"path/filepath"
	"time"
)

// Audit is the retention policy of the audit database (docs/audit.md).
// Zero fields take the defaults: 30 days, 100,000 rows.
type Audit struct {
	RetentionDays int `json:"retentionDays,omitempty"`
	MaxRows       int `json:"maxRows,omitempty"`
}

// Audit defaults.
const (
	DefaultAuditRetentionDays = 30
	DefaultAuditMaxRows       = 100_000
)

// ErrBadAudit: a negative or absurd audit retention setting.
var ErrBadAudit = errors.New("config: audit.retentionDays must be 0-3650 and audit.maxRows 0-10000000")

// MaxAge is the retention age.
func (a Audit) MaxAge() time.Duration {
	d := a.RetentionDays
	if d <= 0 {
		d = DefaultAuditRetentionDays
	}
	return time.Duration(d) * 24 * time.Hour
}

// Rows is the retention row count.
func (a Audit) Rows() int {
	if a.MaxRows <= 0 {
		return DefaultAuditMaxRows
	}
	return a.MaxRows
}

func (a Audit) validate() error {
	if a.RetentionDays < 0 || a.RetentionDays > 3650 || a.MaxRows < 0 || a.MaxRows > 10_000_000 {
		return ErrBadAudit
	}
	return nil
}

// AuditDB is the audit database (SECURITY I-32: mode 0600).
func (p Paths) AuditDB() string { return filepath.Join(p.StateDir, "audit.db") }

// AuditHead is the audit chain's head, signed with the daemon's key, kept
// beside the key (SECURITY I-74).
func (p Paths) AuditHead() string { return filepath.Join(p.StateDir, "audit.head") }
