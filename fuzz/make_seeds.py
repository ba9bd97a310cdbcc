#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Write the seed corpus of am_segment_fuzz (fuzz/corpus/).

Each seed is a claim byte and patch records (see am_segment_fuzz.c): region,
offset (LE16), length, bytes; region 0xFF polls. Offsets are those of
src/am/am_segment.h on an LP64 machine (am_packet: state 0, owner_start 8,
handler 16, nargs 18, has_bulk 19, bulk_pos 20, bulk_len 24, src_peer 28,
args 32; am_header: claim 12, packets 16, packet_shift 20, bulk_blocks 24,
bulk_size 28, size 40, queue_off 64, peers_off 80, the doorbell's asleep
196 and bell 200). The seeds start the
fuzzer at the states a crashed or buggy peer leaves: READY packets with
out-of-range fields, dead and live claims, a garbage peer table, a header
whose geometry lies; and, sent to (records 0xFE: a NOWAIT short request,
0xFD: a NOWAIT bulk request), a segment whose offsets, tails, slot states
or claim lock words were overwritten (am_queue: the claim lock at 0 (TAS,
ticket: next at 0, slot[0]'s word at 64; the POSIX mutex at 0), tail 4160,
bulk_tail 4164, head 4224, packets_off 4288). Run: python3 fuzz/make_seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")
POLL = b"\xff"
WAIT = b"\xfc"


def send(handler=1):
    return bytes([0xFE, handler])


def send_bulk(handler=0, length=100):
    return bytes([0xFD, handler, length])


HDR, PEERS = 0, 1
REQ_Q, REQ_PKT, REQ_SLOTS, REQ_DATA = 2, 3, 4, 5
REP_Q, REP_PKT = 6, 7
FREE, CLAIMED, READY, READY_BULK = 0, 1, 2, 3


def rec(region, off, data):
    return bytes([region]) + struct.pack("<HB", off, len(data)) + data


def state(pos, pid, typ):
    return struct.pack("<Q", (pos << 32) | ((pid & 0xFFFFFF) << 8) | typ)


def packet(pos, typ, pid=1, handler=1, nargs=2, has_bulk=0, bulk_pos=0, bulk_len=0, src=0xFFFF, args=(7, 8)):
    body = state(pos, pid, typ) + struct.pack("<Q", 0)
    body += struct.pack("<HBBIIHH", handler, nargs, has_bulk, bulk_pos, bulk_len, src, 0)
    body += struct.pack("<8I", *(list(args) + [0] * (8 - len(args)))[:8])
    return body


seeds = {}
for claim in range(6):
    seeds[f"empty-claim{claim}"] = bytes([claim])
    seeds[f"ready-claim{claim}"] = bytes([claim]) + rec(REQ_PKT, 0, packet(0, READY)) + POLL
seeds["ready-wild-fields"] = bytes([5]) + rec(REQ_PKT, 0, packet(0, READY, handler=0xFFFF, nargs=0xFF, src=0x7777)) + POLL
seeds["bulk-wild-pos-len"] = bytes([0]) + rec(REQ_PKT, 0, packet(0, READY_BULK, has_bulk=1, bulk_pos=0xFFFFFFFF,
                                                               bulk_len=0xFFFFFFFF)) + POLL
seeds["bulk-ok"] = bytes([1]) + rec(REQ_DATA, 0, bytes(range(64))) + rec(REQ_PKT, 0, packet(
    0, READY_BULK, has_bulk=1, bulk_pos=0, bulk_len=64)) + POLL
seeds["claimed-dead-pid"] = bytes([2]) + rec(REQ_PKT, 0, packet(0, CLAIMED, pid=0x3FFFFF, has_bulk=1,
                                                                 bulk_pos=0)) + POLL + POLL
seeds["claimed-live-pid1"] = bytes([3]) + rec(REQ_PKT, 0, packet(0, CLAIMED, pid=1)) + POLL
seeds["lockfree-tail-ahead"] = bytes([5]) + rec(REQ_Q, 4160, struct.pack("<II", 9, 3)) + POLL
seeds["head-garbage"] = bytes([4]) + rec(REQ_Q, 4224, struct.pack("<I", 0xDEADBEEF)) + POLL
seeds["peer-name-garbage"] = bytes([0]) + rec(PEERS, 0, struct.pack("<I", 2) + b"../../x" * 7) + rec(
    REQ_PKT, 0, packet(0, READY, src=0)) + POLL
seeds["reply-queue-ready"] = bytes([1]) + rec(REP_PKT, 64, packet(1, READY, handler=3)) + rec(
    REP_PKT, 0, packet(0, READY, handler=2)) + POLL
seeds["hdr-packets-3"] = bytes([0]) + rec(HDR, 16, struct.pack("<II", 3, 1)) + POLL
seeds["hdr-packets-huge"] = bytes([1]) + rec(HDR, 16, struct.pack("<II", 1 << 30, 30)) + POLL
seeds["hdr-bulk-size-big"] = bytes([2]) + rec(HDR, 28, struct.pack("<I", 1 << 20)) + POLL
seeds["hdr-queue-off-out"] = bytes([3]) + rec(HDR, 64, struct.pack("<QQ", 1 << 40, 64)) + POLL
seeds["hdr-claim-bad"] = bytes([4]) + rec(HDR, 12, struct.pack("<i", -3)) + POLL
seeds["queue-packets-off-out"] = bytes([5]) + rec(REQ_Q, 4288, struct.pack("<Q", 1 << 33)) + POLL
seeds["bulk-slot-garbage"] = bytes([5]) + rec(REQ_SLOTS, 0, state(0, 0x3FFFFF, CLAIMED)) + rec(
    REQ_PKT, 0, packet(0, READY_BULK, has_bulk=1, bulk_pos=0, bulk_len=128)) + POLL

# the sender side: sends into what the patches left
TAS, TTAS, TICKET, ANDERSON, POSIX, LOCKFREE = range(6)
for claim in range(6):
    seeds[f"send-ok-claim{claim}"] = bytes([claim]) + send(1) + send_bulk(0, 64) + send(3) + POLL + POLL
    seeds[f"send-tail-garbage-claim{claim}"] = bytes([claim]) + rec(REQ_Q, 4160, struct.pack(
        "<II", 0x77777777, 0x66666665)) + send(1) + send_bulk(2) + POLL
    seeds[f"send-pkt-state-garbage-claim{claim}"] = bytes([claim]) + rec(REQ_PKT, 0, struct.pack(
        "<Q", 0xDEADBEEFCAFE00AB)) + send(1) + send_bulk() + POLL
    seeds[f"send-packets-off-out-claim{claim}"] = bytes([claim]) + rec(REQ_Q, 4288, struct.pack(
        "<Q", 1 << 40)) + send(1) + send_bulk()
seeds["send-hdr-queue-off-out"] = bytes([TAS]) + rec(HDR, 64, struct.pack("<QQ", 1 << 40, 64)) + send() + send_bulk()
seeds["send-hdr-bulk-size-big"] = bytes([LOCKFREE]) + rec(HDR, 28, struct.pack("<I", 1 << 20)) + send_bulk(0, 255)
seeds["send-hdr-packets-huge"] = bytes([TICKET]) + rec(HDR, 16, struct.pack("<II", 1 << 30, 30)) + send()
seeds["send-bulk-slot-garbage"] = bytes([ANDERSON]) + rec(REQ_SLOTS, 0, state(0, 12345, 0x77)) + send_bulk() + POLL
seeds["send-lock-held-pid1-tas"] = bytes([TAS]) + rec(REQ_Q, 64, state(0, 1, 1)) + send() + send_bulk()
seeds["send-lock-held-pid1-ttas"] = bytes([TTAS]) + rec(REQ_Q, 64, state(5, 1, 1)) + send() + POLL
seeds["send-lock-held-pid1-ticket"] = bytes([TICKET]) + rec(REQ_Q, 0, struct.pack("<I", 1)) + rec(
    REQ_Q, 64, state(0, 1, 1)) + send() + send_bulk()
seeds["send-lock-held-pid1-anderson"] = bytes([ANDERSON]) + rec(REQ_Q, 0, struct.pack("<I", 1)) + rec(
    REQ_Q, 64, state(0, 1, 1)) + send()
seeds["send-lock-garbage-tas"] = bytes([TAS]) + rec(REQ_Q, 64, struct.pack("<Q", 0x123456789ABCDEF7)) + send()
seeds["send-lock-next-ahead-ticket"] = bytes([TICKET]) + rec(REQ_Q, 0, struct.pack("<I", 5000)) + send() + POLL
seeds["send-lock-next-ahead-anderson"] = bytes([ANDERSON]) + rec(REQ_Q, 0, struct.pack("<I", 70)) + send()
seeds["send-posix-mutex-garbage"] = bytes([POSIX]) + rec(REQ_Q, 0, b"\xa5" * 40) + send() + send_bulk()
seeds["send-posix-mutex-held-pid1"] = bytes([POSIX]) + rec(REQ_Q, 0, struct.pack("<iI", 0, 0) + struct.pack(
    "<i", 1)) + rec(REQ_Q, 0, struct.pack("<i", 1)) + send()
seeds["send-reply-queue-garbage"] = bytes([TICKET]) + rec(REP_Q, 4160, struct.pack("<I", 0x12345)) + send(3) + POLL
seeds["send-reply-pkt-garbage"] = bytes([LOCKFREE]) + rec(REP_PKT, 0, struct.pack("<Q", 0xAB)) + send(3) + POLL + POLL
seeds["send-lockfree-dead-assign"] = bytes([LOCKFREE]) + rec(REQ_Q, 4160, struct.pack("<I", 3)) + send() + POLL + POLL
# wait-*: syncq_am_wait (record 0xFC) over an empty queue, a message, a
# position assigned ahead of the head, a dead claim, and doorbell words of
# any value.
seeds["wait-empty"] = bytes([0]) + WAIT
seeds["wait-ready"] = bytes([1]) + rec(REQ_PKT, 0, packet(0, READY)) + WAIT + WAIT
seeds["wait-lockfree-tail-ahead"] = bytes([LOCKFREE]) + rec(REQ_Q, 4160, struct.pack("<I", 3)) + WAIT + WAIT
seeds["wait-claimed-dead-pid"] = bytes([2]) + rec(REQ_PKT, 0, packet(0, CLAIMED, pid=0x3FFFFF)) + WAIT + WAIT + WAIT
seeds["wait-doorbell-garbage"] = bytes([LOCKFREE]) + rec(HDR, 196, struct.pack("<II", 0xA5A5A5A5, 0xFFFFFFFF)) + \
    send() + WAIT + rec(HDR, 200, struct.pack("<I", 7)) + WAIT

# found-send-*: inputs AFL++ found (not written here; kept as found): an
# UBSan shift in the slot check, and glibc following an overwritten POSIX
# mutex kind word into lock elision (SIGILL without TSX); found-poll-walk-*:
# a lock-free poll that walked an overwritten head on through 2^31
# "skipped" positions (a hang).

os.makedirs(OUT, exist_ok=True)
for name, data in sorted(seeds.items()):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print(f"wrote {len(seeds)} seeds to {OUT}")
