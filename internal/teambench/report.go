package teambench

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// report is the run's markdown: one table, team mode beside the one-machine
// daemon, then what failed, if anything.
func report(c config, team, local *side, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## torii-team-bench, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	if !c.noTeam {
		fmt.Fprintf(&b, "Team mode: %d simulated browsers on %d `torii serve --team` replicas (%s, NATS), %d agents "+
			"(one user each, go-sdk Streamable HTTP on /mcp with the user's token, spread over the replicas). ",
			len(team.devs), c.replicas, map[bool]string{false: "PostgreSQL", true: "one SQLite file"}[c.sqlite], c.agents)
	}
	if !c.noLocal {
		fmt.Fprintf(&b, "One machine: `torii serve` with %d of the same fake browsers and the same %d agents (store tokens on /mcp)%s. ",
			len(local.devs), c.agents, map[bool]string{true: "", false: ", each agent calling it and team mode in turn"}[c.noTeam])
	}
	fmt.Fprintf(&b, "Each agent pauses %s on average between calls; %s of calls; %d CPUs, load %s at the end.\n\n",
		c.interval, elapsed.Round(time.Millisecond), numCPU(), loadavg())
	tl, ll := sorted(team.rec.lat), sorted(local.rec.lat)
	both := len(tl) > 0 && len(ll) > 0
	diff := func(p int) string {
		if !both {
			return "–"
		}
		return fmt.Sprintf("%+.2f", ms(pct(tl, p))-ms(pct(ll, p)))
	}
	val := func(s []time.Duration, p int) string {
		if len(s) == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", ms(pct(s, p)))
	}
	rate := func(s []time.Duration) string {
		return fmt.Sprintf("%.1f", float64(len(s))/elapsed.Seconds())
	}
	perBrowser := func(s *side) string {
		if len(s.devs) == 0 || s.rss0 < 0 || s.rss1 < 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f", float64(s.rss1-s.rss0)/float64(len(s.devs)))
	}
	fails := func(n, warm int) string {
		if warm == 0 {
			return fmt.Sprint(n)
		}
		return fmt.Sprintf("%d (+%d in warm-up)", n, warm)
	}
	goal := func(ok bool, g string) string {
		if !both && len(tl)+len(ll) == 0 {
			return g
		}
		if ok {
			return g + " ✔"
		}
		return g + " ✘"
	}
	d50 := ms(pct(tl, 50)) - ms(pct(ll, 50))
	p50goal := "≤ +2 ms"
	if both {
		p50goal = goal(d50 <= 2, p50goal)
	}
	b.WriteString("| | team mode | one machine | routing adds | goal |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| calls answered | %d | %d | | |\n", len(tl), len(ll))
	fmt.Fprintf(&b, "| p50 ms | %s | %s | %s | %s |\n", val(tl, 50), val(ll, 50), diff(50), p50goal)
	fmt.Fprintf(&b, "| p95 ms | %s | %s | %s | |\n", val(tl, 95), val(ll, 95), diff(95))
	fmt.Fprintf(&b, "| p99 ms | %s | %s | %s | |\n", val(tl, 99), val(ll, 99), diff(99))
	fmt.Fprintf(&b, "| calls/s | %s | %s | | |\n", rate(tl), rate(ll))
	tlost, llost := team.rec.lost+team.warm.lost, local.rec.lost+local.warm.lost
	tmis, lmis := team.rec.misrouted+team.warm.misrouted, local.rec.misrouted+local.warm.misrouted
	fmt.Fprintf(&b, "| lost calls | %s | %s | | %s |\n", fails(team.rec.lost, team.warm.lost), fails(local.rec.lost, local.warm.lost),
		goal(tlost == 0 && llost == 0, "0"))
	fmt.Fprintf(&b, "| misrouted calls | %s | %s | | %s |\n", fails(team.rec.misrouted, team.warm.misrouted),
		fails(local.rec.misrouted, local.warm.misrouted), goal(tmis == 0 && lmis == 0, "0"))
	fmt.Fprintf(&b, "| pairing every browser (one-time secret, real P-256 key), s; budget refusals waited out | %.1f; %d | %.1f; %d | | |\n",
		team.pairing.Seconds(), team.pairWaits, local.pairing.Seconds(), local.pairWaits)
	fmt.Fprintf(&b, "| browsers connected at the end | %d of %d | %d of %d | | |\n", team.connected, len(team.devs), local.connected, len(local.devs))
	fmt.Fprintf(&b, "| browser reconnects | %d | %d | | |\n", reconnects(team.devs), reconnects(local.devs))
	fmt.Fprintf(&b, "| memory per connected browser, KiB (RSS delta / browsers) | %s | %s | | |\n", perBrowser(team), perBrowser(local))
	fmt.Fprintf(&b, "| RSS MiB: idle → browsers connected → end (all processes) | %s | %s | | |\n", rssLine(team), rssLine(local))
	if r := sorted(team.rec.remote); len(r) > 0 {
		fmt.Fprintf(&b, "| team calls whose agent and browser were on different replicas | %d: p50 %.2f, p95 %.2f ms | | | |\n",
			len(r), ms(pct(r, 50)), ms(pct(r, 95)))
	}
	for _, s := range []struct {
		name string
		r    []*recorder
	}{{"team mode", []*recorder{team.warm, team.rec}}, {"one machine", []*recorder{local.warm, local.rec}}} {
		why := map[string]int{}
		for _, r := range s.r {
			for k, v := range r.why {
				why[k] += v
			}
		}
		if len(why) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nFailures, %s (a sample, counted):\n\n", s.name)
		keys := make([]string, 0, len(why))
		for k := range why {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return why[b] - why[a] })
		for _, k := range keys {
			fmt.Fprintf(&b, "- %d× %s\n", why[k], strings.ReplaceAll(k, "\n", " "))
		}
	}
	return b.String()
}

func reconnects(devs []*device) int64 {
	var n int64
	for _, d := range devs {
		n += d.reconnects.Load()
	}
	return n
}

func rssLine(s *side) string {
	if len(s.pids) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f → %.1f → %.1f", float64(s.rss0)/1024, float64(s.rss1)/1024, float64(s.rssEnd)/1024)
}
