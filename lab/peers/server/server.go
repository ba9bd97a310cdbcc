// SPDX-License-Identifier: BSD-2-Clause
// server.go — po-server's Go peer: a request/reply server that starts one
// goroutine per request, as syncq's (lab/exp/po_server.c) and Erlang's.
//
// The client (main) sends request i to the server goroutine's channel and
// waits for the reply; the server starts a goroutine for each request,
// which sends i back on the client's channel and ends. R requests, one
// at a time; each reply must carry its request's number.
//
// Usage: server R
// Prints one line: "us_per_request=<time over R>"; exits 1 on a wrong reply.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func worker(client chan<- int64, n int64) { client <- n }

func server(requests <-chan int64, client chan<- int64) {
	for n := range requests {
		go worker(client, n)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: server REQUESTS")
		os.Exit(2)
	}
	r, err := strconv.ParseInt(os.Args[1], 10, 64)
	if err != nil || r < 1 {
		fmt.Fprintln(os.Stderr, "server: REQUESTS must be a positive integer")
		os.Exit(2)
	}
	requests := make(chan int64, 1) // the server's mailbox
	client := make(chan int64, 1)   // the client's
	go server(requests, client)
	t0 := time.Now()
	for i := int64(0); i < r; i++ {
		requests <- i
		if got := <-client; got != i {
			fmt.Fprintf(os.Stderr, "server: request %d got reply %d\n", i, got)
			os.Exit(1)
		}
	}
	elapsed := time.Since(t0)
	close(requests)
	fmt.Printf("us_per_request=%.4f\n", float64(elapsed.Nanoseconds())/1e3/float64(r))
}
