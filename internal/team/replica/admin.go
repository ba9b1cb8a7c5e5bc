package replica

import (
	"context"
	"net/http"

	"github.com/torii-browser/torii/internal/team/admin"
)

// newAdmin is the admin and user API over this replica's store; its
// decisions reach every replica as bus events.
func (r *replica) newAdmin() *admin.API {
	pub, _ := r.team.URLs()
	return admin.New(r.st, adminEvents{r.bus}, r.admin, admin.Options{Logger: r.log, IdentityPublicKey: r.identity.PublicKey(),
		Public: pub, Tokens: r.checks})
}

// mountAdmin serves the admin and user API at /admin/ and /v1/.
func (r *replica) mountAdmin(mux *http.ServeMux) {
	mux.Handle("/admin/", r.api.Handler())
	mux.Handle("/v1/", r.api.Handler())
}

// adminEvents publishes the API's decisions on the bus.
type adminEvents struct{ b router }

func (e adminEvents) Publish(ctx context.Context, ev event) error {
	return e.b.Publish(ctx, ev)
}
