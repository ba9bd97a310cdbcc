// SPDX-License-Identifier: BSD-2-Clause
// ring.go — po-ring's Go peer: the same ring as syncq's, with goroutines
// and channels.
//
// N goroutines in a ring, each receiving a token on its own channel
// (buffered by one, a mailbox) and forwarding it to the next; the token
// carries the hops left, and the goroutine that takes it to zero tells the
// controller. The spawn is timed until every goroutine has run once. One
// warm-up round of N hops, then VmRSS is read, then H timed hops, then a
// quit token goes round.
//
// With a third argument "member", main takes part: it is one of the N
// members (N-1 goroutines and main), receiving the token on its own
// channel and forwarding it like the others; H is rounded up to whole
// laps so that the last hop reaches main.
//
// Usage: ring N H [member]
// Prints one line: "spawn_us=<per goroutine> hop_ns=<per hop> rss_kb=<per goroutine>"
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const quit = -1

func member(in <-chan int, next chan<- int, done chan<- struct{}, last bool) {
	for k := range in {
		switch {
		case k == quit:
			if last {
				done <- struct{}{}
			} else {
				next <- quit
			}
			return
		case k == 1:
			done <- struct{}{}
		default:
			next <- k - 1
		}
	}
}

// firstRun counts a member's first run (the last one to run sends the time
// on last), then runs it.
func firstRun(started *int64, n int, last chan<- time.Time, in <-chan int, next chan<- int, done chan<- struct{},
	isLast bool) {
	if atomic.AddInt64(started, 1) == int64(n) {
		last <- time.Now()
	}
	member(in, next, done, isLast)
}

// A member of a ring that main is part of: forwards k-1 (main takes the
// last hop) and passes quit on.
func inner(in <-chan int, next chan<- int) {
	for k := range in {
		if k == quit {
			next <- quit
			return
		}
		next <- k - 1
	}
}

// mainLap sends a token of h hops from main (chans[0]) and takes its turns
// until the last hop comes back to it.
func mainLap(chans []chan int, h int) {
	next := chans[1%len(chans)]
	next <- h
	for k := range chans[0] {
		if k == 1 {
			return
		}
		next <- k - 1
	}
}

func memberRing(n, h int) {
	if n < 2 {
		fmt.Fprintln(os.Stderr, "ring: a ring with main as a member needs N >= 2")
		os.Exit(2)
	}
	h = (h + n - 1) / n * n
	rss0 := rssKB()
	t0 := time.Now()
	chans := make([]chan int, n)
	for i := range chans {
		chans[i] = make(chan int, 1)
	}
	for i := 1; i < n; i++ {
		go inner(chans[i], chans[(i+1)%n])
	}
	spawn := time.Since(t0)
	mainLap(chans, n)
	rss1 := rssKB()
	t2 := time.Now()
	mainLap(chans, h)
	hop := time.Since(t2)
	chans[1] <- quit
	if k := <-chans[0]; k != quit {
		fmt.Fprintln(os.Stderr, "ring: the quit token came back wrong")
		os.Exit(1)
	}
	fmt.Printf("spawn_us=%.4f hop_ns=%.4f rss_kb=%.4f\n", float64(spawn.Nanoseconds())/1e3/float64(n-1),
		float64(hop.Nanoseconds())/float64(h), (rss1-rss0)/float64(n-1))
}

func rssKB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "VmRSS:") {
			fields := strings.Fields(s.Text())
			v, _ := strconv.ParseFloat(fields[1], 64)
			return v
		}
	}
	return -1
}

func main() {
	if len(os.Args) != 3 && (len(os.Args) != 4 || os.Args[3] != "member") {
		fmt.Fprintln(os.Stderr, "usage: ring N HOPS [member]")
		os.Exit(2)
	}
	n, err1 := strconv.Atoi(os.Args[1])
	h, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil || n < 1 || h < 1 {
		fmt.Fprintln(os.Stderr, "ring: N and HOPS must be positive integers")
		os.Exit(2)
	}
	if len(os.Args) == 4 {
		memberRing(n, h)
		return
	}
	done := make(chan struct{})
	// The spawn window ends when every goroutine has run once, as syncq's
	// spawn_cold does (lab/exp/po_cold.c): each counts itself at its start,
	// and the one that completes the count reads the clock and tells main,
	// which waits on a channel meanwhile.
	var started int64
	last := make(chan time.Time, 1)
	rss0 := rssKB()
	t0 := time.Now()
	chans := make([]chan int, n)
	for i := range chans {
		chans[i] = make(chan int, 1)
	}
	for i := 0; i < n; i++ {
		go firstRun(&started, n, last, chans[i], chans[(i+1)%n], done, i == n-1)
	}
	t1 := time.Now()
	if tn := <-last; tn.After(t1) {
		t1 = tn
	}
	spawn := t1.Sub(t0)
	chans[0] <- n
	<-done
	rss1 := rssKB()
	t2 := time.Now()
	chans[0] <- h
	<-done
	hop := time.Since(t2)
	chans[0] <- quit
	<-done
	fmt.Printf("spawn_us=%.4f hop_ns=%.4f rss_kb=%.4f\n", float64(spawn.Nanoseconds())/1e3/float64(n),
		float64(hop.Nanoseconds())/float64(h), (rss1-rss0)/float64(n))
}
