"""One pipeline boundary's messages per token on Gloo, without any model: rank 0 sends a decode
step to rank 1, which answers with an id, as memfit's ranks do (native/torch/pipeline_rank.cpp).

Compares the step as three messages (a header, the token id, the hidden states: memfit before
the packing) with one packed byte buffer (memfit now), on torch.distributed's ProcessGroupGloo —
the same C++ process group memfit-torch links.

Usage: python3 gloo_hops.py HIDDEN [STEPS]   prints "three: X us/token  one: Y us/token"
"""
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run(rank, port, hidden, steps, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    header = torch.zeros(6, dtype=torch.long)
    ids = torch.zeros(1, 1, dtype=torch.long)
    h = torch.randn(1, 1, hidden)
    packed = torch.zeros(3 * 8 + 8 + hidden * 4, dtype=torch.uint8)
    token = torch.zeros(2, dtype=torch.long)
    results = {}
    for name, messages in (("three", [header, ids, h]), ("one", [packed])):
        for phase in ("warm", "timed"):
            n = steps // 10 if phase == "warm" else steps
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(n):
                if rank == 0:
                    for m in messages:
                        dist.send(m, 1)
                    dist.recv(token, 1)
                else:
                    for m in messages:
                        dist.recv(m, 0)
                    dist.send(token, 0)
            results[name] = (time.perf_counter() - t0) / n
    if rank == 0:
        out.put(results)
    dist.destroy_process_group()


def main():
    hidden = int(sys.argv[1])
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=run, args=(r, port, hidden, steps, q)) for r in range(2)]
    for p in procs:
        p.start()
    r = q.get()
    for p in procs:
        p.join()
    print("three: %.1f us/token  one: %.1f us/token" % (r["three"] * 1e6, r["one"] * 1e6))


if __name__ == "__main__":
    main()
