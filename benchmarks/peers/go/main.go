// SPDX-License-Identifier: MIT
// The Go peer of scripts/peers.sh: same arguments, workload and output line
// as benchmarks/peers/peer_bench.cc (docs/peers.md).
//
//	peer-bench-go --design=go|go-2 --producers=P --capacity=C --size=S --messages=N
//	peer-bench-go --design=go|go-2 --pingpong --size=S --messages=N
//
// A buffered chan of a struct of S bytes with capacity C; producers are
// goroutines. go runs with GOMAXPROCS at its default (the CPU count); go-2
// is the same program with GOMAXPROCS=2 (the two threads of the task
// table, docs/peers.md). CPU time: syscall.Getrusage(RUSAGE_SELF) user +
// system, every thread of the process (the runtime's included), read just
// outside the timed window (cpu_ns_per_msg). Exits 2 on a bad argument, 1
// if the checksum is wrong.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// User + system CPU seconds of the whole process (every thread) so far.
func cpuSeconds() float64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)*1e-6 }
	return tv(u.Utime) + tv(u.Stime)
}

// What one run measured.
type measured struct {
	seconds, cpuSeconds float64
	checksum            uint64
}

type msg8 struct{ b [8]byte }
type msg24 struct{ b [24]byte }
type msg128 struct{ b [128]byte }
type msg1024 struct{ b [1024]byte }

type options struct {
	design                              string
	producers, capacity, size, messages uint64
	pingpong                            bool
}

func usageError(what string) {
	fmt.Fprintf(os.Stderr, "peer-bench-go: %s\n"+
		"usage: peer-bench-go --design=go|go-2 --producers=P --capacity=C --size=S --messages=N\n"+
		"       peer-bench-go --design=go|go-2 --pingpong --size=S --messages=N\n"+
		"sizes: 8 24 128 1024; messages a multiple of producers\n", what)
	os.Exit(2)
}

func fail(what string) {
	fmt.Fprintf(os.Stderr, "peer-bench-go: %s\n", what)
	os.Exit(1)
}

func parseCount(name, text string) uint64 {
	if text == "" || len(text) > 18 || strings.TrimLeft(text, "0123456789") != "" {
		usageError(fmt.Sprintf("bad value for --%s: '%s'", name, text))
	}
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		usageError(fmt.Sprintf("bad value for --%s", name))
	}
	return v
}

func parse() options {
	o := options{producers: 1}
	haveProducers, haveCapacity := false, false
	for _, arg := range os.Args[1:] {
		switch {
		case arg == "--pingpong":
			o.pingpong = true
		case strings.HasPrefix(arg, "--design="):
			o.design = strings.TrimPrefix(arg, "--design=")
		case strings.HasPrefix(arg, "--producers="):
			o.producers = parseCount("producers", strings.TrimPrefix(arg, "--producers="))
			haveProducers = true
		case strings.HasPrefix(arg, "--capacity="):
			o.capacity = parseCount("capacity", strings.TrimPrefix(arg, "--capacity="))
			haveCapacity = true
		case strings.HasPrefix(arg, "--size="):
			o.size = parseCount("size", strings.TrimPrefix(arg, "--size="))
		case strings.HasPrefix(arg, "--messages="):
			o.messages = parseCount("messages", strings.TrimPrefix(arg, "--messages="))
		default:
			usageError(fmt.Sprintf("unknown argument '%s'", arg))
		}
	}
	if o.design == "" {
		usageError("--design is required")
	}
	if o.design != "go" && o.design != "go-2" {
		usageError(fmt.Sprintf("unknown design '%s'", o.design))
	}
	if o.size != 8 && o.size != 24 && o.size != 128 && o.size != 1024 {
		usageError("--size must be 8, 24, 128 or 1024")
	}
	if o.messages == 0 {
		usageError("--messages must be at least 1")
	}
	if o.pingpong {
		if (haveProducers && o.producers != 1) || (haveCapacity && o.capacity != 1) {
			usageError("--pingpong uses one producer and capacity 1")
		}
		o.producers, o.capacity = 1, 1
		return o
	}
	if !haveCapacity {
		usageError("--capacity is required")
	}
	if o.producers < 1 || o.producers > 1024 {
		usageError("--producers must be 1 to 1024")
	}
	if o.capacity < 1 || o.capacity > 1<<30 {
		usageError("--capacity must be 1 to 2^30")
	}
	if o.messages%o.producers != 0 {
		usageError("--messages must be a multiple of --producers")
	}
	if o.messages/o.producers >= 1<<32 {
		usageError("--messages / --producers must be below 2^32")
	}
	return o
}

// Sum (mod 2^64) of p << 32 | i over producers p and messages i < m of each.
func expectedChecksum(producers, m uint64) uint64 {
	var pairsP, pairsM uint64
	if producers%2 == 0 {
		pairsP = (producers / 2) * (producers - 1)
	} else {
		pairsP = producers * ((producers - 1) / 2)
	}
	if m%2 == 0 {
		pairsM = (m / 2) * (m - 1)
	} else {
		pairsM = m * ((m - 1) / 2)
	}
	return (pairsP*m)<<32 + producers*pairsM
}

// The message type M with its payload accessors.
type codec[M any] struct {
	put func(*M, uint64)
	get func(*M) uint64
}

func throughput[M any](o options, c codec[M]) measured {
	per := o.messages / o.producers
	ch := make(chan M, o.capacity)
	var ready atomic.Uint64
	var gate sync.WaitGroup
	gate.Add(1)
	var done sync.WaitGroup
	for p := uint64(0); p < o.producers; p++ {
		done.Add(1)
		go func(p uint64) {
			defer done.Done()
			ready.Add(1)
			gate.Wait()
			for i := uint64(0); i < per; i++ {
				var m M
				c.put(&m, p<<32|i)
				ch <- m
			}
		}(p)
	}
	for ready.Load() != o.producers {
		runtime.Gosched()
	}
	var sum uint64
	cpuStart := cpuSeconds()
	start := time.Now()
	gate.Done()
	for i := uint64(0); i < o.messages; i++ {
		m := <-ch
		sum += c.get(&m)
	}
	seconds := time.Since(start).Seconds()
	cpu := cpuSeconds() - cpuStart
	done.Wait()
	return measured{seconds, cpu, sum}
}

// The echo goroutine is running (it has said so) before the clock starts,
// as in the C++ and Rust runners.
func pingpong[M any](o options, c codec[M]) measured {
	toEcho := make(chan M, 1)
	fromEcho := make(chan M, 1)
	n := o.messages
	var ready atomic.Bool
	go func() {
		ready.Store(true)
		for i := uint64(0); i < n; i++ {
			fromEcho <- <-toEcho
		}
	}()
	for !ready.Load() {
		runtime.Gosched()
	}
	var sum uint64
	cpuStart := cpuSeconds()
	start := time.Now()
	for i := uint64(0); i < n; i++ {
		var m M
		c.put(&m, i)
		toEcho <- m
		r := <-fromEcho
		sum += c.get(&r)
	}
	seconds := time.Since(start).Seconds()
	return measured{seconds, cpuSeconds() - cpuStart, sum}
}

func run[M any](o options, c codec[M]) measured {
	if o.pingpong {
		return pingpong(o, c)
	}
	return throughput(o, c)
}

func main() {
	o := parse()
	if o.design == "go-2" {
		runtime.GOMAXPROCS(2)
	}
	var r measured
	le := binary.LittleEndian
	switch o.size {
	case 8:
		r = run(o, codec[msg8]{
			func(m *msg8, v uint64) { le.PutUint64(m.b[:8], v) },
			func(m *msg8) uint64 { return le.Uint64(m.b[:8]) }})
	case 24:
		r = run(o, codec[msg24]{
			func(m *msg24, v uint64) { le.PutUint64(m.b[:8], v) },
			func(m *msg24) uint64 { return le.Uint64(m.b[:8]) }})
	case 128:
		r = run(o, codec[msg128]{
			func(m *msg128, v uint64) { le.PutUint64(m.b[:8], v) },
			func(m *msg128) uint64 { return le.Uint64(m.b[:8]) }})
	default:
		r = run(o, codec[msg1024]{
			func(m *msg1024, v uint64) { le.PutUint64(m.b[:8], v) },
			func(m *msg1024) uint64 { return le.Uint64(m.b[:8]) }})
	}
	seconds, checksum := r.seconds, r.checksum
	if seconds <= 0 {
		seconds = 1e-9
	}
	cpuNs := r.cpuSeconds * 1e9 / float64(o.messages)
	var expected uint64
	if o.pingpong {
		expected = expectedChecksum(1, o.messages)
		fmt.Printf("design=%s mode=pingpong size=%d messages=%d seconds=%.6f ns_per_roundtrip=%.1f cpu_seconds=%.6f cpu_ns_per_roundtrip=%.1f checksum=%d\n",
			o.design, o.size, o.messages, seconds, seconds*1e9/float64(o.messages), r.cpuSeconds, cpuNs, checksum)
	} else {
		expected = expectedChecksum(o.producers, o.messages/o.producers)
		fmt.Printf("design=%s producers=%d capacity=%d size=%d messages=%d seconds=%.6f msgs_per_sec=%.0f cpu_seconds=%.6f cpu_ns_per_msg=%.1f checksum=%d\n",
			o.design, o.producers, o.capacity, o.size, o.messages, seconds, float64(o.messages)/seconds, r.cpuSeconds, cpuNs, checksum)
	}
	if checksum != expected {
		fmt.Fprintf(os.Stderr, "peer-bench-go: checksum mismatch for %s: got %d, expected %d\n", o.design, checksum, expected)
		os.Exit(1)
	}
}
