#!/usr/bin/env escript
%%! +P 4194304
%% SPDX-License-Identifier: BSD-2-Clause
%% skynet.erl — po-skynet's Erlang peer: the skynet tree in Erlang
%% processes, as syncq's (lab/exp/po_skynet.c) and Go's.
%%
%% skynet(Parent, Num, Size): a leaf (Size 1) replies Num; an internal
%% process spawns 10 children on Num + I*Size/10 (Size/10 each), sums
%% their 10 replies and replies the sum. The root covers LEAVES numbers (a
%% power of 10), so the sum is LEAVES*(LEAVES-1)/2. The emulator flag
%% above raises the process limit (262,144 by default) past the tree's
%% 1,111,111 processes.
%%
%% Usage: escript skynet.erl LEAVES
%% Prints one line: "time_ms=<the whole tree> sum=<the root's reply>";
%% exits 1 when the sum is wrong.
-mode(compile).

main([LeavesStr]) ->
    Leaves = list_to_integer(LeavesStr),
    case power_of_ten(Leaves) of
        false ->
            io:format(standard_error, "skynet: LEAVES must be a power of 10, at least 10~n", []),
            halt(2);
        true ->
            ok
    end,
    Self = self(),
    T0 = erlang:monotonic_time(nanosecond),
    spawn(fun() -> skynet(Self, 0, Leaves) end),
    Sum = receive {sum, S} -> S end,
    T1 = erlang:monotonic_time(nanosecond),
    io:format("time_ms=~.4f sum=~b~n", [(T1 - T0) / 1000000, Sum]),
    case Sum =:= Leaves * (Leaves - 1) div 2 of
        true -> ok;
        false -> halt(1)
    end;
main(_) ->
    io:format(standard_error, "usage: skynet.erl LEAVES~n", []),
    halt(2).

power_of_ten(10) -> true;
power_of_ten(N) when N > 10, N rem 10 =:= 0 -> power_of_ten(N div 10);
power_of_ten(_) -> false.

skynet(Parent, Num, 1) ->
    Parent ! {sum, Num};
skynet(Parent, Num, Size) ->
    Self = self(),
    Sub = Size div 10,
    [spawn(fun() -> skynet(Self, Num + I * Sub, Sub) end) || I <- lists:seq(0, 9)],
    Parent ! {sum, collect(10, 0)}.

collect(0, Sum) -> Sum;
collect(K, Sum) -> receive {sum, V} -> collect(K - 1, Sum + V) end.
