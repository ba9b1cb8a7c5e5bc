package e2e_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTeam is one run of a three-replica gateway shared by two people, each
// with a browser started by `torii launch --server` and an agent. Its steps share the cluster and run in order:
// later ones kill and stop what earlier ones use.
func TestTeam(t *testing.T) {
	browserPath(t)
	c := newCluster(t, 3)
	web := newSite(t)
	// Each replica says where browsers and agents connect: its publicURL.
	if l := tailFile(c.replicas[0].log, 1<<20); !strings.Contains(l, "browsers connect to ws://"+c.replicas[0].addr+"/acp") {
		t.Errorf("replica r0 does not name its public browser address at start:\n%s", l)
	}
	alice := c.newUser(0, "alice")
	bob := c.newUser(1, "bob")

	// Each browser has its own Service stand-in, so the test knows which
	// replica holds its link; they start on different replicas.
	fwdA := newForwarder(t, 0, c.addrs)
	fwdB := newForwarder(t, 1, c.addrs)
	var bA, bB *browser
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); bA = launchBrowser(t, alice, "alice-browser", fwdA, web.origin()) }()
	go func() { defer wg.Done(); bB = launchBrowser(t, bob, "bob-browser", fwdB, web.origin()) }()
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	bA.deviceID = waitDevice(t, c, 1, alice)
	bB.deviceID = waitDevice(t, c, 2, bob)
	homeA, homeB := waitHome(t, fwdA), waitHome(t, fwdB)
	t.Logf("alice's browser %s is home on r%d, bob's %s on r%d", bA.deviceID, homeA, bB.deviceID, homeB)

	// The agents reach replicas other than their browser's home, and not
	// the same one, so every call crosses the bus.
	calls := &callLog{}
	riA := other(homeA)
	riB := other(homeB, riA)
	agA := connectAgent(t, c, riA, alice, "", calls)
	agB := connectAgent(t, c, riB, bob, "", calls)
	waitCallable(t, agA, bA, 60*time.Second)
	waitCallable(t, agB, bB, 60*time.Second)

	t.Run("each agent drives its own browser", func(t *testing.T) {
		var wg sync.WaitGroup
		for _, p := range []struct {
			ag *agent
			b  *browser
		}{{agA, bA}, {agB, bB}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				driveClick(t, web, p.ag, p.b)
			}()
		}
		wg.Wait()
	})

	t.Run("the other user's browser is refused as a missing one", func(t *testing.T) {
		const madeUp = "0123456789abcdef0123456789abcdef"
		for _, p := range []struct {
			u     teamUser
			ri    int
			other *browser
		}{{alice, riA, bB}, {bob, riB, bA}} {
			foreign := connectAgent(t, c, p.ri, p.u, p.other.deviceID, calls).call(p.other.deviceID, "tabs", map[string]any{}, 20*time.Second)
			missing := connectAgent(t, c, p.ri, p.u, madeUp, calls).call(madeUp, "tabs", map[string]any{}, 20*time.Second)
			if foreign.ok() || missing.ok() {
				t.Fatalf("%s reached a browser not its own: foreign %q, missing %q", p.u.Name, foreign.text(), missing.text())
			}
			if foreign.code() == "" || foreign.code() != missing.code() {
				t.Errorf("%s: another user's browser gives code %q, a missing one %q; want the same typed refusal", p.u.Name, foreign.code(), missing.code())
			}
			ft := strings.ReplaceAll(foreign.text(), p.other.deviceID, "<id>")
			mt := strings.ReplaceAll(missing.text(), madeUp, "<id>")
			if ft != mt {
				t.Errorf("%s: the refusals read differently:\nanother user's: %s\nmissing:        %s", p.u.Name, ft, mt)
			}
			refusedAudit(t, c, p.u, p.other)
			for _, h := range web.hits() {
				if h.agent == p.other.agent && h.user == p.u.Name {
					t.Errorf("%s's browser loaded %s's page %s", p.other.name, p.u.Name, h.path)
				}
			}
		}
	})

	t.Run("a replica killed mid-call", func(t *testing.T) {
		home := waitHome(t, fwdA)
		if home == agA.replica {
			t.Fatalf("alice's agent is on her browser's home r%d; the test needs them apart", home)
		}
		arrived := web.await(func(h hit) bool { return h.path == "/slow" && h.hold == "kill" && h.agent == bA.agent })
		result := make(chan reply, 1)
		go func() {
			result <- agA.call(bA.deviceID, "navigate", map[string]any{"url": web.url("/slow?user=alice&hold=kill"), "timeoutMs": 40000}, 60*time.Second)
		}()
		select {
		case <-arrived:
		case r := <-result:
			t.Fatalf("navigate to /slow answered before the page was asked for: %s", r.text())
		case <-time.After(30 * time.Second):
			t.Fatal("alice's browser never asked for /slow")
		}
		drain(fwdA.conns)
		killed := time.Now()
		c.kill(home)
		t.Logf("killed r%d, alice's browser's home, mid-call", home)

		var r reply
		select {
		case r = <-result:
		case <-time.After(10 * time.Second):
			t.Fatal("the call on the killed replica did not return within 10 s")
		}
		if r.ok() {
			t.Fatalf("the call whose home died succeeded: %s", r.text())
		}
		if !mayHaveRun.MatchString(r.text()) {
			t.Errorf("the call whose home died says nothing of whether it ran (code %q): %s", r.code(), r.text())
		}
		t.Logf("the interrupted call got %q after %s: %s", r.code(), r.took, firstLine(r.text()))

		// Back: the browser reconnects through the Service to a live replica
		// and the agent's next call reaches it.
		var back int
		select {
		case back = <-fwdA.conns:
		case <-time.After(10 * time.Second):
			t.Fatal("alice's browser did not reconnect within 10 s")
		}
		var last reply
		for {
			last = agA.call(bA.deviceID, "tabs", map[string]any{}, 10*time.Second)
			if last.ok() || time.Since(killed) > 10*time.Second {
				break
			}
		}
		elapsed := time.Since(killed)
		if !last.ok() {
			t.Fatalf("alice's browser is not callable %s after the kill: %s", elapsed, last.text())
		}
		t.Logf("alice's browser callable again through r%d %s after the kill (last call took %s)", back, elapsed, last.took)
		if elapsed > 2*time.Second+last.took {
			t.Errorf("alice's browser came back %s after the kill; want ≤ 2 s plus the call (%s)", elapsed, last.took)
		}
		web.release("kill")

		// The killed replica comes back as Kubernetes would restart it.
		c.start(home)
		c.waitReady(home, 30*time.Second)

		checkAudit(t, c, calls, map[string]string{bA.deviceID: alice.ID, bB.deviceID: bob.ID})
		for _, h := range web.hits() {
			if h.agent == bB.agent && h.user == "alice" {
				t.Errorf("bob's browser loaded alice's page %s", h.path)
			}
		}
	})

	t.Run("Postgres stopped and restarted", func(t *testing.T) {
		agA = outage(t, c, agA, bA, "Postgres", c.pg.Stop, func() { c.pg.Start(t) })
	})
	t.Run("NATS stopped and restarted", func(t *testing.T) {
		agB = outage(t, c, agB, bB, "NATS", c.nats.Stop, func() { c.nats.Start(t) })
	})

	t.Run("a pairing code replayed on another replica is refused, a revoked device is closed", func(t *testing.T) {
		link, d := pairReplay(t, c, bob, alice)
		revokeDevice(t, c, bob, link, d)
	})
	t.Run("a revoked token's call ends on every replica", func(t *testing.T) {
		revokeToken(t, c, web, alice, bA, other(waitHome(t, fwdA)))
	})
}

var mayHaveRun = regexp.MustCompile(`(?i)may have (partly )?run`)

// outage stops an engine, checks that calls fail typed and in time and that
// no replica says it is ready, then restarts it and waits for recovery. It
// returns the agent reconnected, as a client whose requests failed would.
func outage(t *testing.T, c *cluster, ag *agent, b *browser, engine string, stop, start func()) *agent {
	stop()
	stopped := true
	defer func() {
		if stopped {
			start()
		}
	}()
	for i := range c.replicas {
		c.waitReadiness(i, false, 15*time.Second)
	}
	const deadline = 20 * time.Second
	for i := 0; i < 2; i++ {
		r := ag.call(b.deviceID, "tabs", map[string]any{}, deadline)
		if r.took >= deadline {
			t.Fatalf("with %s down a call hung for its whole deadline %s", engine, deadline)
		}
		if r.ok() {
			t.Fatalf("with %s down a call succeeded: %s", engine, r.text())
		}
		if r.err == nil && r.code() == "" {
			t.Errorf("with %s down the call's error is not typed: %s", engine, r.text())
		}
		// An outage is not the agent's fault: a token refusal would send it
		// to fix a token that is fine.
		if strings.Contains(r.text(), "Unauthorized") {
			t.Errorf("with %s down a valid token is refused as unauthorized: %s", engine, r.text())
		}
		t.Logf("with %s down: %q in %s: %s", engine, r.code(), r.took, firstLine(r.text()))
	}
	start()
	stopped = false
	for i := range c.replicas {
		c.waitReady(i, 30*time.Second)
	}
	fresh := connectAgent(t, c, ag.replica, ag.user, "", ag.log)
	waitCallable(t, fresh, b, 30*time.Second)
	return fresh
}

// waitDevice waits until the user's browser has paired: the user's own
// device list (asked of replica i) names it.
func waitDevice(t *testing.T, c *cluster, i int, u teamUser) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var raw json.RawMessage
		if _, err := c.api(i, u.Token, http.MethodGet, "/v1/devices", nil, &raw); err != nil {
			t.Fatal(err)
		}
		if devs := decodeList[struct {
			ID string `json:"deviceId"`
		}](raw, "devices"); len(devs) > 0 {
			return devs[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's browser did not pair within 60 s", u.Name)
		}
		time.Sleep(100 * time.Millisecond) // the person's next look at the device list
	}
}

// decodeList reads a JSON list given bare or as {key: [...]}.
func decodeList[T any](raw json.RawMessage, key string) []T {
	var out []T
	if json.Unmarshal(raw, &out) == nil {
		return out
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		_ = json.Unmarshal(m[key], &out)
	}
	return out
}

// waitHome waits for the browser's link (its one long-lived connection
// through the forwarder) and returns the replica it reached.
func waitHome(t *testing.T, f *forwarder) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		h := f.homes()
		if len(h) == 1 {
			for i := range h {
				return i
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("a browser holds links on %v after 30 s; want one", h)
		}
		select {
		case <-f.conns:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitCallable waits until a call reaches the browser: its presence has
// spread and its link is up.
func waitCallable(t *testing.T, ag *agent, b *browser, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := ag.call(b.deviceID, "tabs", map[string]any{}, 20*time.Second)
		if r.ok() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s cannot reach %s after %s: %s", ag, b.name, d, r.text())
		}
		time.Sleep(100 * time.Millisecond) // the agent's retry
	}
}

// driveClick is what a person checks: the agent opens the page, presses
// the button, and the page says so; the web server saw that browser's click.
func driveClick(t *testing.T, web *site, ag *agent, b *browser) {
	clicked := web.await(func(h hit) bool { return h.path == "/clicked" && h.user == ag.user.Name })
	nav := ag.call(b.deviceID, "navigate", map[string]any{"url": web.url("/page?user=" + ag.user.Name)}, 60*time.Second)
	if !nav.ok() {
		t.Errorf("%s: navigate: %s", ag, nav.text())
		return
	}
	if r := ag.call(b.deviceID, "click", map[string]any{"selector": "#go"}, 60*time.Second); !r.ok() {
		t.Errorf("%s: click: %s", ag, r.text())
		return
	}
	var h hit
	select {
	case h = <-clicked:
	case <-time.After(30 * time.Second):
		t.Errorf("%s: the web server never saw the click", ag)
		return
	}
	if h.agent != b.agent {
		t.Errorf("%s's click reached the server from %q, not from %s", ag, h.agent, b.name)
	}
	want := "Pressed by " + ag.user.Name
	w := ag.call(b.deviceID, "wait_for", map[string]any{"text": want, "timeoutMs": 10000}, 30*time.Second)
	if !w.ok() {
		t.Errorf("%s: wait_for %q: %s", ag, want, w.text())
	}
	r := ag.call(b.deviceID, "read_text", map[string]any{}, 30*time.Second)
	if !r.ok() || !strings.Contains(r.text(), want) {
		t.Errorf("%s: read_text after the click does not show %q: %s", ag, want, r.text())
	}
}

// other returns a replica index in 0..2 not among not.
func other(not ...int) int {
	for i := 0; i < 3; i++ {
		free := true
		for _, n := range not {
			if n == i {
				free = false
			}
		}
		if free {
			return i
		}
	}
	return 0
}

func drain(ch chan int) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
