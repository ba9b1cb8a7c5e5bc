package replica

import "net/http"

// mountAdmin serves the admin and user API at /admin/ and /v1/.
func (r *replica) mountAdmin(mux *http.ServeMux) {}
