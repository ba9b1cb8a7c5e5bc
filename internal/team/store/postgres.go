package store

import (
	"context"
	"errors"
)

func openPostgres(ctx context.Context, url string) (Store, error) {
	return nil, errors.New("store: postgres: not yet")
}
