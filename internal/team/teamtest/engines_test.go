package teamtest

import (
	"net"
	"strconv"
	"testing"
)

func TestEnginesStartStopStart(t *testing.T) {
	t.Parallel()
	for _, s := range []*Server{Postgres(t), NATS(t)} {
		s.Stop()
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port)); err == nil {
			c.Close()
			t.Fatalf("%s still accepts after Stop", s.URL)
		}
		s.Start(t)
	}
}
