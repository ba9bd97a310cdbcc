#!/usr/bin/env escript
%% SPDX-License-Identifier: BSD-2-Clause
%% ring.erl — po-ring's Erlang peer: the same ring as syncq's, in Erlang.
%%
%% N processes in a ring, each forwarding a token to the next; the token
%% carries the hops left, and the process that takes it to zero tells the
%% controller. spawn_us times the spawn of the N processes until every one
%% has run once (the link messages that make the ring follow, untimed).
%% One warm-up round of N hops (every process has taken the token),
%% then VmRSS is read, then H timed hops, then a quit message goes round.
%%
%% With a third argument "member", the script's own process takes part:
%% it is one of the N members (N-1 spawned processes and itself),
%% receiving the token and forwarding it like the others; H is rounded up
%% to whole laps so that the last hop reaches it.
%%
%% Usage: escript ring.erl N H [member]
%% Prints one line: "spawn_us=<per process> hop_ns=<per hop> rss_kb=<per process>"
%% (rss_kb: the VM's resident-set growth from before spawning to after the
%% warm-up round, over N; the same measure syncq's ring reports).
-mode(compile).

main([NStr, HStr]) ->
    N = list_to_integer(NStr),
    H = list_to_integer(HStr),
    Self = self(),
    Started = atomics:new(1, []),
    Rss0 = rss_kb(),
    T0 = erlang:monotonic_time(nanosecond),
    Pids = spawn_ring(N, Self, Started),
    T1 = erlang:monotonic_time(nanosecond),
    receive {started, Tn} -> ok end,
    First = link_ring(Pids),
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
              [(max(T1, Tn) - T0) / 1000 / N, (T3 - T2) / H, (Rss1 - Rss0) / N]);
main([NStr, HStr, "member"]) ->
    N = list_to_integer(NStr),
    H0 = list_to_integer(HStr),
    N >= 2 orelse halt(2),
    H = (H0 + N - 1) div N * N,
    Self = self(),
    Rss0 = rss_kb(),
    T0 = erlang:monotonic_time(nanosecond),
    Next = spawn_members(N - 1, Self),
    T1 = erlang:monotonic_time(nanosecond),
    main_lap(Next, N),
    Rss1 = rss_kb(),
    T2 = erlang:monotonic_time(nanosecond),
    main_lap(Next, H),
    T3 = erlang:monotonic_time(nanosecond),
    Next ! quit,
    receive quit -> ok end,
    io:format("spawn_us=~.4f hop_ns=~.4f rss_kb=~.4f~n",
              [(T1 - T0) / 1000 / (N - 1), (T3 - T2) / H, (Rss1 - Rss0) / (N - 1)]);
main(_) ->
    io:format(standard_error, "usage: ring.erl N HOPS [member]~n", []),
    halt(2).

%% The ring with the script's process as a member: M spawned processes,
%% the last one's successor the script's process; returns the first.
spawn_members(M, Main) ->
    Pids = [spawn(fun() -> wait_inner() end) || _ <- lists:seq(1, M)],
    link_inner(Pids, Main),
    hd(Pids).

link_inner([P], Main) -> P ! {next, Main};
link_inner([P, Q | Rest], Main) -> P ! {next, Q}, link_inner([Q | Rest], Main).

wait_inner() ->
    receive {next, Next} -> inner(Next) end.

inner(Next) ->
    receive
        {token, K} -> Next ! {token, K - 1}, inner(Next);
        quit -> Next ! quit
    end.

%% Send a token of H hops and take the script's turns until the last hop
%% comes back to it.
main_lap(Next, H) ->
    Next ! {token, H},
    main_turns(Next).

main_turns(Next) ->
    receive
        {token, 1} -> ok;
        {token, K} -> Next ! {token, K - 1}, main_turns(Next)
    end.

%% Spawn the N members. The spawn window ends when every member has run
%% once, as syncq's spawn_cold does (lab/exp/po_cold.c): each counts itself
%% at its start, and the one that completes the count reads the clock and
%% tells the script's process, which waits for that in receive. The link
%% messages that tell each member its successor go after the window (syncq's
%% members need none: they compute their successor's pid).
spawn_ring(N, Ctl, Started) ->
    [spawn(fun() -> started(Started, N, Ctl), wait_next(Ctl) end) || _ <- lists:seq(1, N)].

started(Started, N, Ctl) ->
    case atomics:add_get(Started, 1, 1) of
        N -> Ctl ! {started, erlang:monotonic_time(nanosecond)};
        _ -> ok
    end.

%% Each member learns its successor from a link message; returns the first.
link_ring([P1 | _] = Pids) ->
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
