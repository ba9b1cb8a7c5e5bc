package admin_test

import (
	"context"
	"sync"
	"testing"

	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/team/teamtest"
)

// Two replicas, each with its own connection pool to one PostgreSQL: a
// pairing code approved on one is refused on the other, and two approvals
// racing on both make exactly one device.
func TestPairingCodeOnceAcrossReplicasOnPostgres(t *testing.T) {
	t.Parallel()
	url := teamtest.Postgres(t).NewDatabase(t, "admin_pairing")
	open := func() store.Store {
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	r1, r2 := newEnvOn(t, open()), newEnvOn(t, open())
	_, alice := r1.userWithToken("alice", false)
	_, bob := r2.userWithToken("bob", false)

	p := r1.pending("123456")
	r1.must(r1.do("POST", "/v1/pair", alice, map[string]any{"code": p.Code}), 200)
	r2.must(r2.do("POST", "/v1/pair", alice, map[string]any{"code": p.Code}), 404)

	q := r2.pending("654321")
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i, e := range []*env{r1, r2} {
		tok := []string{alice, bob}[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.do("POST", "/v1/pair", tok, map[string]any{"code": q.Code}).status
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 404, 409: // gone from the pending list, or decided between listing and deciding
		default:
			t.Fatalf("status %d", s)
		}
	}
	ds, err := r1.st.Devices(context.Background(), "")
	if ok != 1 || err != nil || len(ds) != 2 {
		t.Fatalf("%d approvals, devices %+v, %v", ok, ds, err)
	}
}
