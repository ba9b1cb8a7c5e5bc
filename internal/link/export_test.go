package link

import "time"

// SetAuthTimeout shortens the authentication deadline for tests.
func SetAuthTimeout(o *Options, d time.Duration) { o.authTimeout = d }

// SetDeadlines shortens the keep-alive and frame deadlines for tests.
func SetDeadlines(o *Options, ping, pong, frame time.Duration) {
	o.pingInterval, o.pongTimeout, o.frameTimeout = ping, pong, frame
}
