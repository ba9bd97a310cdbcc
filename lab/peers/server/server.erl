#!/usr/bin/env escript
%% SPDX-License-Identifier: BSD-2-Clause
%% server.erl — po-server's Erlang peer: a request/reply server that
%% spawns one process per request, as syncq's (lab/exp/po_server.c) and
%% Go's.
%%
%% The client (the script's process) sends request I to the server process
%% and waits for the reply; the server spawns a process for each request,
%% which sends I back to the client and exits. R requests, one at a time;
%% each reply must carry its request's number.
%%
%% Usage: escript server.erl R
%% Prints one line: "us_per_request=<time over R>"; exits 1 on a wrong reply.
-mode(compile).

main([RStr]) ->
    R = list_to_integer(RStr),
    if R < 1 -> io:format(standard_error, "server: R must be positive~n", []), halt(2);
       true -> ok
    end,
    Server = spawn(fun server/0),
    T0 = erlang:monotonic_time(nanosecond),
    ok = client(Server, 0, R),
    T1 = erlang:monotonic_time(nanosecond),
    Server ! quit,
    io:format("us_per_request=~.4f~n", [(T1 - T0) / 1000 / R]);
main(_) ->
    io:format(standard_error, "usage: server.erl REQUESTS~n", []),
    halt(2).

client(_Server, R, R) -> ok;
client(Server, I, R) ->
    Server ! {request, self(), I},
    receive
        {reply, I} -> client(Server, I + 1, R);
        {reply, Other} ->
            io:format(standard_error, "server: request ~b got reply ~b~n", [I, Other]),
            halt(1)
    end.

server() ->
    receive
        {request, Client, I} ->
            spawn(fun() -> Client ! {reply, I} end),
            server();
        quit -> ok
    end.
