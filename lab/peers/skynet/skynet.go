// SPDX-License-Identifier: BSD-2-Clause
// skynet.go — po-skynet's Go peer: the skynet tree with goroutines and
// channels, as syncq's (lab/exp/po_skynet.c) and Erlang's.
//
// skynet(num, size): a leaf (size 1) replies num; an internal goroutine
// starts 10 children on num + i*size/10 (size/10 each), sums their 10
// replies from its own channel and replies the sum. The root covers
// LEAVES numbers (a power of 10), so the sum is LEAVES*(LEAVES-1)/2.
//
// Usage: skynet LEAVES
// Prints one line: "time_ms=<the whole tree> sum=<the root's reply>";
// exits 1 when the sum is wrong.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

const fanout = 10

func skynet(reply chan<- int64, num, size int64) {
	if size == 1 {
		reply <- num
		return
	}
	mine := make(chan int64, fanout)
	sub := size / fanout
	for i := int64(0); i < fanout; i++ {
		go skynet(mine, num+i*sub, sub)
	}
	var sum int64
	for i := 0; i < fanout; i++ {
		sum += <-mine
	}
	reply <- sum
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: skynet LEAVES")
		os.Exit(2)
	}
	leaves, err := strconv.ParseInt(os.Args[1], 10, 64)
	p := int64(1)
	for p < leaves {
		p *= fanout
	}
	if err != nil || leaves < fanout || p != leaves {
		fmt.Fprintln(os.Stderr, "skynet: LEAVES must be a power of 10, at least 10")
		os.Exit(2)
	}
	t0 := time.Now()
	root := make(chan int64, 1)
	go skynet(root, 0, leaves)
	sum := <-root
	elapsed := time.Since(t0)
	fmt.Printf("time_ms=%.4f sum=%d\n", float64(elapsed.Nanoseconds())/1e6, sum)
	if sum != leaves*(leaves-1)/2 {
		os.Exit(1)
	}
}
