package store_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"path/filepath"
	"testing"

	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/team/teamtest"
)

// The per-call lookups (token, then device) and the audit append, on each
// store: what a tool call costs the store.
func BenchmarkHotPath(b *testing.B) {
	pg := teamtest.Postgres(b)
	for name, url := range map[string]string{"sqlite": "sqlite:" + filepath.Join(b.TempDir(), "team.db"), "postgres": pg.URL} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s, err := store.Open(ctx, url)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			u, _ := s.CreateUser(ctx, "bench")
			_, secret, _ := s.CreateToken(ctx, u.ID, "", false)
			k, _ := ecdh.P256().GenerateKey(rand.Reader)
			d, err := s.AddDevice(ctx, u.ID, "b", "o", k.PublicKey().Bytes())
			if err != nil {
				b.Fatal(err)
			}
			b.Run("CheckToken+UserDevice", func(b *testing.B) {
				for b.Loop() {
					tok, err := s.CheckToken(ctx, secret)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.UserDevice(ctx, tok.UserID, d.ID); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("AppendAudit", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.AppendAudit(ctx, store.AuditRecord{UserID: u.ID, DeviceID: d.ID}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
