#!/usr/bin/env escript
%% SPDX-License-Identifier: BSD-2-Clause
%% ring.erl — po-ring's Erlang peer: the same ring as syncq's, in Erlang.
%%
%% N processes in a ring, each forwarding a token to the next; the token
%% carries the hops left, and the process that takes it to zero tells the
%% controller. One warm-up round of N hops (every process has run once),
%% then VmRSS is read, then H timed hops, then a quit message goes round.
%%
%% Usage: escript ring.erl N H
%% Prints one line: "spawn_us=<per process> hop_ns=<per hop> rss_kb=<per process>"
%% (rss_kb: the VM's resident-set growth from before spawning to after the
%% warm-up round, over N; the same measure syncq's ring reports).
-mode(compile).

main([NStr, HStr]) ->
    N = list_to_integer(NStr),
    H = list_to_integer(HStr),
    Self = self(),
    Rss0 = rss_kb(),
    T0 = erlang:monotonic_time(nanosecond),
    First = spawn_ring(N, Self),
    T1 = erlang:monotonic_time(nanosecond),
    First ! {token, N},
    receive done -> ok end,
    Rss1 = rss_kb(),
    T2 = erlang:monotonic_time(nanosecond),
    First ! {token, H},
    receive done -> ok end,
    T3 = erlang:monotonic_time(nanosecond),
    First ! quit,
    receive quit_done -> ok end,
    io:format("spawn_us=~.4f hop_ns=~.4f rss_kb=~.4f~n",
              [(T1 - T0) / 1000 / N, (T3 - T2) / H, (Rss1 - Rss0) / N]);
main(_) ->
    io:format(standard_error, "usage: ring.erl N HOPS~n", []),
    halt(2).

%% Spawn the N members; each learns its successor from a link message.
spawn_ring(N, Ctl) ->
    Pids = [spawn(fun() -> wait_next(Ctl) end) || _ <- lists:seq(1, N)],
    [P1 | _] = Pids,
    link_up(Pids, P1),
    P1.

link_up([P], First) -> P ! {next, First, true};
link_up([P, Q | Rest], First) -> P ! {next, Q, false}, link_up([Q | Rest], First).

wait_next(Ctl) ->
    receive {next, Next, Last} -> member(Next, Ctl, Last) end.

member(Next, Ctl, Last) ->
    receive
        {token, 1} -> Ctl ! done, member(Next, Ctl, Last);
        {token, K} -> Next ! {token, K - 1}, member(Next, Ctl, Last);
        quit when Last -> Ctl ! quit_done;
        quit -> Next ! quit
    end.

rss_kb() ->
    {ok, Bin} = file:read_file("/proc/self/status"),
    [Line] = [L || L <- binary:split(Bin, <<"\n">>, [global]), binary:match(L, <<"VmRSS:">>) =:= {0, 6}],
    [_, Kb | _] = binary:split(Line, [<<" ">>, <<"\t">>], [global, trim_all]),
    binary_to_integer(Kb).
