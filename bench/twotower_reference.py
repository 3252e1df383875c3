#!/usr/bin/python3
"""PyTorch reference of rltrade's two-tower retrieval training step, for timing.

Measures training iterations per second of the same model, loss and optimiser that
rltrade's native two-tower trainer (src/retrieval/) implements, on the same data, so the
two can be compared side by side on one machine. Ours; needs Debian's python3-torch
(run with /usr/bin/python3, not a virtualenv's python):

    /usr/bin/python3 bench/twotower_reference.py --threads 2 --json

Data
  --pairs FILE.npz: X_train (N,T,D), Y_train (N,D), X_val (M,T,D), Y_val (M,D), float32 or
  float16, and optionally Y_train_row / Y_val_row (int64: the bank row of each target, as
  rltrade's synthetic generator writes them). --bank FILE.npz: vectors (B,D), optional ids.
  Members stored uncompressed (np.savez) are memory-mapped through their offsets in the
  zip file; compressed members (np.savez_compressed) are read whole once, since a deflate
  stream cannot be sliced. Batches are gathered from the mapping and cast to float32.
  Without --pairs/--bank the data are random, of shapes --n/--t/--d/--bank-size (float16
  sequences, targets = rows of the random bank); speed does not depend on the values.
  Without Y_train_row the target of training row i gets the id -2 - i (never a bank row).
  X_val/Y_val are only checked for shape: the validation pass is not timed.

Model
  Query tower: x (b,T,D) -> torch.nn.GRU(D, H, batch_first=True, bidirectional=True)
  -> output (b,T,2H) -> mean over T -> Linear(2H, D) -> F.normalize (L2). Document tower:
  the identity on L2-normalised bank vectors (no parameters).

Loss, for b queries q_i with targets y_i (L2-normalised) whose bank rows are r_i; the
logits of query i, all divided by tau, are
  [ q_i.y_i | q_i.y_j, j != i | q_i.m_k, memory-bank entries | q_i.h_il, l < n_hard ]
  - in-batch entry j is masked (-inf) when j == i or r_j == r_i;
  - the memory bank is a FIFO queue of the last --memory-bank normalised targets (with
    their bank rows), empty at the start, appended with each micro-batch's targets
    after that micro-batch's loss; an entry is masked when its row == r_i;
  - h_il are query i's hard negatives, given as bank rows (a slot of -1 or of row r_i is
    masked). rltrade mines them with FAISS on a background thread; here, when
    --hard-negatives > 0, they are uniformly random bank rows (the mining itself is not
    part of the timed step, only the gather and the products);
  loss = mean_i CE(logits_i, class 0)
       + margin_weight * mean_i relu(margin - (q_i.y_i - max over unmasked negatives q_i.n))
  the margin term on unscaled similarities, only when margin > 0 (a query with no
  unmasked negative adds 0). Defaults tau 0.05, margin 0.03, margin_weight 1.0.

Optimiser: torch.optim.AdamW(lr, betas (0.9, 0.999), eps 1e-8, weight_decay 0.01);
  --accum micro-batches per optimiser step, each micro-batch's loss divided by accum;
  clip_grad_norm_(1.0) before each step. Learning rate for update u = 1..U (1-based,
  U = ceil((warmup_iters + iters) / accum)), as rltrade's warmup_cosine schedule:
    u <= W: lr * u / W;   else lr_min + (lr - lr_min) * (1 + cos(pi * (u - W) / max(1, U - W))) / 2
  with W = --warmup.

Timing: one iteration = one micro-batch (gather, forward, loss, backward, bank append,
  and the clip + AdamW step when the accumulation completes). --warmup-iters
  iterations run first untimed, then --iters timed ones. With --prefill-bank (default)
  the memory bank starts full of random normalised vectors (bank row -1, never masked),
  so every timed iteration pays the full bank cost (b x memory_bank x D products forward
  and backward) as a long run does after its first memory_bank / b steps.

Threads: --threads N sets torch.set_num_threads(N) and, before torch is imported,
  OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS, since Debian's torch calls
  the system OpenBLAS (pthread build), which keeps its own thread pool.
"""

import argparse
import json
import math
import os
import sys
import time
import zipfile


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", help="pairs .npz (X_train, Y_train, X_val, Y_val[, Y_train_row])")
    p.add_argument("--bank", help="bank .npz (vectors[, ids])")
    p.add_argument("--n", type=int, default=2048, help="random data: training pairs")
    p.add_argument("--t", type=int, default=100, help="random data: sequence length")
    p.add_argument("--d", type=int, default=768, help="random data: embedding dimension")
    p.add_argument("--bank-size", type=int, default=50000, help="random data: bank rows")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--accum", type=int, default=1, help="micro-batches per optimiser step")
    p.add_argument("--hidden", type=int, default=512, help="GRU hidden size per direction")
    p.add_argument("--memory-bank", type=int, default=50000, help="FIFO memory-bank capacity")
    p.add_argument("--hard-negatives", type=int, default=0, help="hard negatives per query")
    p.add_argument("--tau", type=float, default=0.05)
    p.add_argument("--margin", type=float, default=0.03)
    p.add_argument("--margin-weight", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--lr-min", type=float, default=1e-6)
    p.add_argument("--warmup", type=int, default=2, help="linear LR warm-up, optimiser steps")
    p.add_argument("--iters", type=int, default=20, help="timed iterations (micro-batches)")
    p.add_argument("--warmup-iters", type=int, default=3, help="untimed iterations first")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--blas-threads", type=int, default=0,
                   help="OpenBLAS threads (default: --threads)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--prefill-bank", action=argparse.BooleanOptionalAction, default=True,
                   help="start with a full memory bank of random vectors (default on)")
    p.add_argument("--profile", action="store_true",
                   help="print a torch.profiler table of the timed iterations to stderr")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    a = p.parse_args(argv)
    for name in ("n", "t", "d", "bank_size", "batch", "accum", "hidden", "iters", "threads"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    for name in ("memory_bank", "hard_negatives", "warmup", "warmup_iters"):
        if getattr(a, name) < 0:
            p.error(f"--{name.replace('_', '-')} must be >= 0")
    if a.tau <= 0:
        p.error("--tau must be > 0")
    return a


ARGS = parse_args()
# Before torch (and with it OpenMP and OpenBLAS) is loaded: the pools size themselves then.
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.blas_threads or ARGS.threads)
# libgomp's idle workers spin ~0.3 s after each parallel region (GOMP_SPINCOUNT) and then
# starve OpenBLAS's own pthreads: at the defaults on a 2-core machine, --threads 2 ran at
# 0.14-0.46 it/s spinning and 1.1-1.6 it/s passive (1 thread: ~1.0). Each parallel region
# still costs a wake-up, so --threads 1 --blas-threads 2 was the fastest use of 2 cores.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


# ---------------------------------------------------------------------------- data


def _npz_members(path):
    """name -> array for every .npy member of an .npz; stored members memory-mapped."""
    out = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
        for info in zf.infolist():
            if not info.filename.endswith(".npy"):
                continue
            name = info.filename[:-4]
            arr = None
            if info.compress_type == zipfile.ZIP_STORED:
                # Local file header: 30 fixed bytes, then the name and the extra field.
                f.seek(info.header_offset)
                head = f.read(30)
                if head[:4] == b"PK\x03\x04":
                    n_name = int.from_bytes(head[26:28], "little")
                    n_extra = int.from_bytes(head[28:30], "little")
                    f.seek(info.header_offset + 30 + n_name + n_extra)
                    version = np.lib.format.read_magic(f)
                    if version == (1, 0):
                        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
                    else:
                        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
                    if not dtype.hasobject:
                        arr = np.memmap(path, dtype=dtype, mode="r", offset=f.tell(),
                                        shape=shape, order="F" if fortran else "C")
            if arr is None:  # compressed (or odd): one full read of this member
                with zf.open(info) as m:
                    arr = np.lib.format.read_array(m, allow_pickle=False)
            out[name] = arr
    return out


def _need(members, path, name, ndim):
    if name not in members:
        sys.exit(f"{path}: no member '{name}' (has: {', '.join(sorted(members))})")
    a = members[name]
    if a.ndim != ndim:
        sys.exit(f"{path}: '{name}' has shape {a.shape}, expected {ndim} dimensions")
    return a


def load_data(a, rng):
    """Returns X_train (N,T,D), Y_train (N,D), target ids (N,) int64, bank (B,D)."""
    if a.pairs:
        m = _npz_members(a.pairs)
        x = _need(m, a.pairs, "X_train", 3)
        y = _need(m, a.pairs, "Y_train", 2)
        xv = _need(m, a.pairs, "X_val", 3)
        yv = _need(m, a.pairs, "Y_val", 2)
        n, _, d = x.shape
        if y.shape != (n, d) or xv.shape[2] != d or yv.shape != (xv.shape[0], d):
            sys.exit(f"{a.pairs}: inconsistent shapes X_train {x.shape} Y_train {y.shape} "
                     f"X_val {xv.shape} Y_val {yv.shape}")
        if "Y_train_row" in m:
            ids = np.asarray(m["Y_train_row"], dtype=np.int64)
            if ids.shape != (n,):
                sys.exit(f"{a.pairs}: Y_train_row has shape {ids.shape}, expected ({n},)")
        else:
            ids = -2 - np.arange(n, dtype=np.int64)
    else:
        n, t, d = a.n, a.t, a.d
        x = np.empty((n, t, d), dtype=np.float16)
        for s in range(0, n, 64):  # in blocks: bounded float32 scratch
            e = min(n, s + 64)
            x[s:e] = rng.standard_normal((e - s, t, d), dtype=np.float32)
        ids = rng.integers(0, a.bank_size, size=n, dtype=np.int64)
        y = None  # rows of the bank, below
    if a.bank:
        bm = _npz_members(a.bank)
        bank = _need(bm, a.bank, "vectors", 2)
        if bank.shape[1] != d:
            sys.exit(f"{a.bank}: vectors have D={bank.shape[1]}, pairs D={d}")
    else:
        bank = rng.standard_normal((a.bank_size, d), dtype=np.float32)
    if y is None:
        y = bank[ids]
    if ids.size and ids.max() >= bank.shape[0]:
        sys.exit("Y_train_row refers to a row past the end of the bank")
    return x, y, ids, bank


# ---------------------------------------------------------------------------- model


class QueryTower(torch.nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.gru = torch.nn.GRU(d, hidden, batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(2 * hidden, d)

    def forward(self, x):  # (b, T, D) -> (b, D), unit rows
        out, _ = self.gru(x)
        return F.normalize(self.head(out.mean(dim=1)), dim=1)


def infonce(q, y, tid, mem, mem_ids, hard_v, hard_ids, tau, margin, margin_weight):
    """The loss of the docstring (mean over the batch; not yet divided by accum)."""
    b = q.shape[0]
    pos = (q * y).sum(dim=1)
    neg = [(q @ y.t()).masked_fill(tid[None, :] == tid[:, None], float("-inf"))]
    if mem is not None and mem.shape[0] > 0:
        neg.append((q @ mem.t()).masked_fill(mem_ids[None, :] == tid[:, None], float("-inf")))
    if hard_v is not None and hard_v.shape[1] > 0:
        s = torch.bmm(hard_v, q.unsqueeze(2)).squeeze(2)  # (b, n_hard)
        masked = (hard_ids < 0) | (hard_ids == tid[:, None])
        neg.append(s.masked_fill(masked, float("-inf")))
    neg = torch.cat(neg, dim=1)
    logits = torch.cat([pos[:, None], neg], dim=1) / tau
    loss = F.cross_entropy(logits, torch.zeros(b, dtype=torch.long))
    if margin > 0 and neg.shape[1] > 0:
        max_neg = neg.max(dim=1).values
        gap = torch.relu(margin - (pos - max_neg))
        gap = torch.where(torch.isfinite(max_neg), gap, torch.zeros_like(gap))
        loss = loss + margin_weight * gap.mean()
    return loss


class MemoryBank:
    """FIFO of the last `capacity` targets as a ring buffer (logit order is irrelevant)."""

    def __init__(self, capacity, d):
        self.vectors = torch.zeros(capacity, d)
        self.ids = torch.full((capacity,), -1, dtype=torch.long)
        self.capacity, self.count, self.head = capacity, 0, 0

    def push(self, v, ids):
        if self.capacity == 0:
            return
        v, ids = v[-self.capacity:], ids[-self.capacity:]
        n = v.shape[0]
        first = min(n, self.capacity - self.head)
        self.vectors[self.head:self.head + first] = v[:first]
        self.ids[self.head:self.head + first] = ids[:first]
        if n > first:
            self.vectors[:n - first] = v[first:]
            self.ids[:n - first] = ids[first:]
        self.head = (self.head + n) % self.capacity
        self.count = min(self.capacity, self.count + n)

    def view(self):
        return self.vectors[:self.count], self.ids[:self.count]


def lr_at(u, total, a):
    """Learning rate of optimiser update u (1-based) of `total`."""
    if u <= a.warmup:
        return a.lr * u / a.warmup
    frac = min(1.0, max(0.0, (u - a.warmup) / max(1, total - a.warmup)))
    return a.lr_min + (a.lr - a.lr_min) * 0.5 * (1.0 + math.cos(math.pi * frac))


def gru_gflop(b, t, d, h):
    """GRU forward + backward (~3x forward), 2 directions, 2 flops per multiply-add."""
    return 3 * 2 * 2 * t * b * 3 * h * (d + h) / 1e9


# ---------------------------------------------------------------------------- main


def main(a):
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    x_all, y_all, id_all, bank = load_data(a, rng)
    n, t, d = x_all.shape
    if a.batch > n:
        sys.exit(f"--batch {a.batch} is larger than the {n} training pairs")
    model = QueryTower(d, a.hidden)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01)
    memory = MemoryBank(a.memory_bank, d)
    if a.prefill_bank and a.memory_bank > 0:
        memory.push(F.normalize(torch.randn(a.memory_bank, d), dim=1),
                    torch.full((a.memory_bank,), -1, dtype=torch.long))

    total_iters = a.warmup_iters + a.iters
    total_updates = -(-total_iters // a.accum)
    order, cursor = rng.permutation(n), 0
    update = 0
    last_loss = float("nan")

    def iteration(it):
        nonlocal order, cursor, update, last_loss
        if cursor + a.batch > n:
            order, cursor = rng.permutation(n), 0
        rows = np.sort(order[cursor:cursor + a.batch])  # sorted: sequential reads of a mapping
        cursor += a.batch
        x = torch.from_numpy(np.asarray(x_all[rows], dtype=np.float32))
        y = F.normalize(torch.from_numpy(np.asarray(y_all[rows], dtype=np.float32)), dim=1)
        tid = torch.from_numpy(id_all[rows])
        hard_v = hard_ids = None
        if a.hard_negatives > 0:
            hr = rng.integers(0, bank.shape[0], size=(len(rows), a.hard_negatives))
            hv = np.asarray(bank[hr.ravel()], dtype=np.float32)
            hard_v = F.normalize(torch.from_numpy(hv), dim=1).view(len(rows), a.hard_negatives, d)
            hard_ids = torch.from_numpy(hr.astype(np.int64))
        mem, mem_ids = memory.view()
        q = model(x)
        loss = infonce(q, y, tid, mem, mem_ids, hard_v, hard_ids, a.tau, a.margin,
                       a.margin_weight if a.margin > 0 else 0.0)
        (loss / a.accum).backward()
        memory.push(y, tid)  # after this micro-batch's loss, as rltrade does
        if (it + 1) % a.accum == 0 or it + 1 == total_iters:
            update += 1
            for g in opt.param_groups:
                g["lr"] = lr_at(update, total_updates, a)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
        last_loss = loss.item()

    for it in range(a.warmup_iters):
        iteration(it)

    prof = None
    if a.profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        prof.__enter__()
    start = time.perf_counter()
    for it in range(a.warmup_iters, total_iters):
        iteration(it)
    seconds = time.perf_counter() - start
    if prof is not None:
        prof.__exit__(None, None, None)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25),
              file=sys.stderr)

    rate = a.iters / seconds
    gflop = gru_gflop(a.batch, t, d, a.hidden)
    result = {
        "reference_it_per_sec": rate,
        "threads": a.threads,
        "blas_threads": a.blas_threads or a.threads,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        "batch": a.batch,
        "t": t,
        "d": d,
        "hidden": a.hidden,
        "torch_version": torch.__version__,
        "seconds": seconds,
        "iters": a.iters,
        "accum": a.accum,
        "memory_bank": a.memory_bank,
        "prefill_bank": a.prefill_bank,
        "hard_negatives": a.hard_negatives,
        "gru_gflop_per_iter": gflop,
        "last_loss": last_loss,
    }
    if a.json:
        print(json.dumps(result))
    else:
        print(f"reference (torch {torch.__version__}, {a.threads} thread(s)): "
              f"{rate:.3f} it/s ({a.iters} iterations in {seconds:.2f} s), batch {a.batch} "
              f"x T {t} x D {d}, hidden {a.hidden}, memory bank {memory.count}/{a.memory_bank}, "
              f"{a.hard_negatives} hard negatives; GRU ~{gflop:.1f} GFLOP/iteration "
              f"({gflop * rate:.1f} GFLOP/s); last loss {last_loss:.4f}")


if __name__ == "__main__":
    main(ARGS)
