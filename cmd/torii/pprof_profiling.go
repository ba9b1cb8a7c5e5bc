//go:build toriipprof

package main

// Built only with -tags toriipprof (`make bench-abuse ABUSE_PROFILE=dir` does): the abuse
// benchmark reads the daemon's CPU and heap profiles from TORII_PPROF, a loopback address, on
// a mux of its own so nothing reaches the daemon's endpoints. Release builds have no such
// listener.

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
)

func init() {
	addr := os.Getenv("TORII_PPROF")
	if addr == "" {
		return
	}
	// Fine-grained heap samples: what a flood leaves behind is a few MB.
	runtime.MemProfileRate = 4096
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		_ = ln.Close()
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	go func() { _ = http.Serve(ln, mux) }()
}
