#!/usr/bin/env python3
"""Logic depth of a Yosys-mapped Xilinx netlist, in LUT levels.

Reads the JSON netlist `scripts/synth.sh` writes and leaves out every
flip-flop, RAM, shift register and DSP cell, so each path runs from a
register (or a top-level input) to a register (or a top-level output); a
path's end is named by the register it feeds where the net has no name.

A cell-count path (Yosys `ltp`) counts a 64-bit add as 16 CARRY4 cells and a
LUT8 as a LUT and two wide-mux cells, though on an UltraScale+ part a carry
stage and a wide mux are a fraction of a LUT and its net. This measure weighs
each bit-level arc with the cost it has there, in units of one LUT level
(a LUT plus the routed net after it, about 0.45 ns on a -2 part):

  LUT input to output                         1
  MUXF7/F8/F9 (no routed net in between)      1/4
  into a carry chain (S or DI to O or CO)     1/4
  along a carry chain, per CARRY4 (CI to CO)  1/8  (a CARRY8 stage is two)

An estimate before placement: real routing can be longer or shorter, and
Vivado re-maps LUTs. At 250 MHz the 4 ns period, less clock-to-out, setup and
clock uncertainty, leaves about 8 such levels.

Prints the depth, the LUTs on the deepest path and the path itself (named
nets where Yosys kept a name); with RNIC_SYNTH_PATHS=A,B also the path into
the deepest bit of each named net.
"""
import json
import os
import sys
from collections import defaultdict

LUT = 1.0
MUXF = 0.25
CARRY_IN = 0.25
CARRY_STEP = 0.125
FREE = {"INV", "BUF", "IBUF", "OBUF", "BUFG", "IBUFG"}
# Cells whose outputs start a path and whose inputs end one.
SEQUENTIAL = ("FD", "RAM", "SRL", "DSP", "URAM")


def arcs_of(module):
    """Bit-level timing arcs: output bit -> [(input bit, weight)]; and each bit's driving cell type."""
    arcs = defaultdict(list)
    driver = {}
    for cell in module["cells"].values():
        kind = cell["type"]
        con = cell["connections"]
        dirs = cell["port_directions"]
        if kind.startswith(SEQUENTIAL):
            continue
        if kind in ("CARRY4", "CARRY8"):
            n = 4 if kind == "CARRY4" else 8
            s, di = con["S"], con["DI"]
            co = con.get("CO", ["x"] * n)
            o = con.get("O", ["x"] * n)
            cin = [b for p in ("CI", "CYINIT", "CI_TOP") for b in con.get(p, []) if isinstance(b, int)]
            step = CARRY_STEP * n / 4
            for i in range(n):
                # CO[i] sees S and DI up to bit i; O[i] is S[i] xor the carry into bit i.
                for out, feeds in ((co[i], s[: i + 1] + di[: i + 1]), (o[i], s[: i + 1] + di[:i])):
                    if not isinstance(out, int):
                        continue
                    driver[out] = kind
                    arcs[out].extend((b, step) for b in cin)
                    arcs[out].extend((b, CARRY_IN) for b in feeds if isinstance(b, int))
            continue
        if kind.startswith("LUT"):
            weight = LUT
        elif kind.startswith("MUXF"):
            weight = MUXF
        elif kind in FREE:
            weight = 0.0
        else:
            weight = LUT
        ins = [b for p, bits in con.items() if dirs[p] == "input" for b in bits if isinstance(b, int)]
        for p, bits in con.items():
            if dirs[p] != "output":
                continue
            for out in bits:
                if isinstance(out, int):
                    driver[out] = kind
                    arcs[out].extend((b, weight) for b in ins)
    return arcs, driver


def depth(module):
    """(arrival, predecessor) for every bit, by a topological walk without recursion."""
    arcs, driver = arcs_of(module)
    best = {}
    for root in list(arcs):
        if root in best:
            continue
        stack = [(root, False)]
        on_stack = set()
        while stack:
            bit, done = stack.pop()
            if done:
                on_stack.discard(bit)
                arrival, pred = 0.0, None
                for src, w in arcs.get(bit, ()):
                    a = best.get(src, (0.0, None))[0] + w
                    if a > arrival:
                        arrival, pred = a, src
                best[bit] = (arrival, pred)
                continue
            if bit in best or bit in on_stack:
                continue
            on_stack.add(bit)
            stack.append((bit, True))
            for src, _ in arcs.get(bit, ()):
                if src not in best and src not in on_stack:
                    stack.append((src, False))
    return best, driver


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: synth_depth.py NETLIST.json [N: also the N deepest ends by net name]")
    design = json.load(open(sys.argv[1]))
    tops = [m for m in design["modules"].values() if str(m.get("attributes", {}).get("top", "0")).strip("0")]
    if len(tops) != 1:
        sys.exit("synth_depth.py: no single top module in the netlist")
    module = tops[0]
    best, driver = depth(module)
    if not best:
        print("0.00 levels, 0 LUTs")
        return
    end = max(best, key=lambda b: best[b][0])
    names = {}
    for name, net in module["netnames"].items():
        if net.get("hide_name"):
            continue
        for k, b in enumerate(net["bits"]):
            if isinstance(b, int):
                names.setdefault(b, f"{name}[{k}]")
    # An end the netlist left unnamed is named by the register (or RAM) it feeds: "> turn.state$q[3] (FDRE.D)".
    kept = dict(names)
    for cell in module["cells"].values():
        if not cell["type"].startswith(SEQUENTIAL):
            continue
        dirs, con = cell["port_directions"], cell["connections"]
        outs = [kept[b] for p, bits in con.items() if dirs[p] == "output" for b in bits if b in kept]
        if not outs:
            continue
        for p, bits in con.items():
            if dirs[p] == "input" and p not in ("C", "CLK", "CLKARDCLK", "CLKBWRCLK"):
                for b in bits:
                    if isinstance(b, int) and b not in names:
                        names[b] = f"> {outs[0]} ({cell['type']}.{p})"

    def show(end):
        path = []
        bit = end
        while bit is not None:
            path.append(bit)
            bit = best.get(bit, (0.0, None))[1]
        path.reverse()
        luts = sum(1 for b in path if driver.get(b, "").startswith("LUT"))
        print(f"{best[end][0]:.2f} levels, {luts} LUTs")
        for b in path:
            print(f"  {best.get(b, (0.0,))[0]:6.2f}  {driver.get(b, 'start'):7s} {names.get(b, '')}")

    def sources(end):
        # The registers (and inputs) whose longest path into `end` is within a level of the deepest:
        # the signals a shorter path must take off it (ABC's own net names say little).
        arcs = arcs_of(module)[0]
        cone, stack = {end}, [end]
        while stack:
            for src, _ in arcs.get(stack.pop(), ()):
                if src not in cone:
                    cone.add(src)
                    stack.append(src)
        users = defaultdict(list)
        for out in cone:
            for src, w in arcs.get(out, ()):
                users[src].append((out, w))
        pending = {b: len(users[b]) for b in cone}
        to_end = {end: 0.0}
        ready = [b for b in cone if pending[b] == 0]
        while ready:
            b = ready.pop()
            for src, w in arcs.get(b, ()):
                to_end[src] = max(to_end.get(src, 0.0), to_end[b] + w)
                pending[src] -= 1
                if pending[src] == 0:
                    ready.append(src)
        top = max(to_end.values())
        near = {}
        for b, d in to_end.items():
            if b not in arcs and d >= top - 1.0:
                base = names.get(b, "?").split("[")[0]
                near[base] = max(near.get(base, 0.0), d)
        print("  sources within a level of it:")
        for base, d in sorted(near.items(), key=lambda kv: -kv[1])[:20]:
            print(f"    {d:6.2f}  {base}")

    show(end)
    for want in filter(None, os.environ.get("RNIC_SYNTH_PATHS", "").split(",")):
        bits = [b for name, net in module["netnames"].items() if name == want for b in net["bits"] if b in best]
        if not bits:
            print(f"path into {want}: no such net with a path")
            continue
        print(f"path into {want}:")
        show(max(bits, key=lambda b: best[b][0]))
        sources(max(bits, key=lambda b: best[b][0]))
    if len(sys.argv) == 3:
        # Ends: named nets no cell reads (those feeding a removed register, RAM or an output).
        read = {src for srcs in arcs_of(module)[0].values() for src, _ in srcs}
        deepest = {}
        for b, name in names.items():
            if b in best and b not in read:
                base = name.split("[")[0] + (" (in)" if name.startswith(">") else "")
                deepest[base] = max(deepest.get(base, 0.0), best[b][0])
        print("deepest ends:")
        for base, a in sorted(deepest.items(), key=lambda kv: -kv[1])[: int(sys.argv[2])]:
            print(f"  {a:6.2f}  {base}")


if __name__ == "__main__":
    main()
