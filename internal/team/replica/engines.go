package replica

import (
	"context"
	"errors"
	"log/slog"

	"github.com/torii-browser/torii/internal/team/store"
)

// Until the store's and the bus's packages land, a replica cannot open them.
func defaultStore(context.Context, string) (store.Store, error) {
	return nil, errors.New("replica: this build has no store driver")
}

func defaultBus(context.Context, string, string, *slog.Logger) (router, error) {
	return nil, errors.New("replica: this build has no bus")
}

// enginesBuilt says whether defaultStore and defaultBus open real engines;
// the tests that need them skip until then.
const enginesBuilt = false
