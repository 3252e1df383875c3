// rltrade learn: the manual of the LibTorch learner.
//
// What it is. Proximal Policy Optimisation with Stable-Baselines3's semantics, written on
// LibTorch, over the batched environments of env/:
//   policy.h      ActorCritic: separate pi/vf MLPs, Gaussian (state-independent log_std)
//                 or categorical head, SB3's orthogonal initialisation.
//   normalize.h   VecNormalizer: running observation and discounted-return statistics
//                 (SB3 VecNormalize), registered buffers so checkpoints hold them.
//   rollout.h     RolloutBuffer (preallocated (n_steps, n_envs, ...) storage) and GAE in
//                 plain C++.
//   schedule.h    constant / linear / warmup_cosine schedules parsed from strings.
//   ppo.h         PpoOptions (the [algo] section), the clipped-surrogate loss, gradient
//                 clipping and one PPO update over a rollout.
//   trainer.h     Trainer, the interface the training loop drives; PpoTrainer: rollout +
//                 update per Iterate(), one batched forward per vector step for all
//                 environments; SetComputeThreads(), the one place the learner's thread
//                 counts are set.
//   es.h          EsTrainer: evolution strategies (OpenAI-ES, ARS) on the same actor,
//                 [algo] name = "es"; scales out over a Collective.
//   native_learner.h  the native backend ([policy] backend = "native"): the trainer's
//                 forwards, update and Adam on src/native/, synced to the torch modules
//                 for checkpoints and evaluation.
//   checkpoint.h  crash-safe checkpoint directories (policy, optimizer, normalisers,
//                 counters, RNG states, every env's state) and their loading.
//   evaluate.h    deterministic evaluation episodes (SB3 evaluate_policy).
//   inference.h   PolicyRunner: a checkpoint's policy for eval/signal (LibTorch-free
//                 header).
//
// What it is not. Not the glue that reads configs and writes run directories (train/,
// evalrun/), and not a backtester (eval/). Only learn/, perf/ (and the retrieval trainer)
// include LibTorch headers; each translation unit that does costs ~20 s to compile, so
// include the narrow headers above rather than this file where compile time matters.
//
// Semantics are pinned to outside references: SB3's recorded minibatches and GAE, the
// PyTorch formulas for log-probabilities, entropies and clipping (learn_test.cc).
#ifndef RLT_LEARN_LEARN_H_
#define RLT_LEARN_LEARN_H_

#include "learn/checkpoint.h"
#include "learn/es.h"
#include "learn/evaluate.h"
#include "learn/inference.h"
#include "learn/native_learner.h"
#include "learn/normalize.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "learn/rollout.h"
#include "learn/schedule.h"
#include "learn/trainer.h"

#endif  // RLT_LEARN_LEARN_H_
