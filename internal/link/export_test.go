package link

import "time"

// SetAuthTimeout shortens the authentication deadline for tests.
func SetAuthTimeout(o *Options, d time.Duration) { o.authTimeout = d }
