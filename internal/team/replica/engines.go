package replica

import (
	"context"
	"log/slog"

	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

func defaultStore(ctx context.Context, url string) (store.Store, error) { return store.Open(ctx, url) }

func defaultBus(ctx context.Context, url, replica string, log *slog.Logger) (router, error) {
	b, err := bus.Connect(ctx, url, replica, log)
	if err != nil {
		return nil, err
	}
	return b, nil
}
