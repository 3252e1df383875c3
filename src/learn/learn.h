// rltrade learn: the manual of the learner.
//
// What it is. Proximal Policy Optimisation with Stable-Baselines3's semantics over the
// batched environments of env/, on the native engine (src/native/); LibTorch is an option
// (the torch backend and the tests' oracle), not a requirement:
//   policy.h      PolicyOptions: separate pi/vf MLPs (or LSTMs), Gaussian (state-independent
//                 log_std) or categorical head, SB3's orthogonal initialisation.
//   learner.h     Learner, the interface PpoTrainer drives; LearnerState, parameters and
//                 Adam state as named tensors (the checkpoint format).
//   normalize.h   VecNormalizer: running observation and discounted-return statistics
//                 (SB3 VecNormalize), plain C++; checkpoints hold every statistic.
//   rollout.h     RolloutBuffer (preallocated (n_steps, n_envs, ...) storage) and GAE in
//                 plain C++.
//   schedule.h    constant / linear / warmup_cosine schedules parsed from strings.
//   ppo.h         PpoOptions (the [algo] section), the loss settings and the loss log.
//   trainer.h     Trainer, the interface the training loop drives; PpoTrainer: rollout +
//                 update per Iterate(), one batched forward per vector step for all
//                 environments; SetComputeThreads(), the one place the learner's thread
//                 counts are set.
//   es.h          EsTrainer: evolution strategies (OpenAI-ES, ARS) on the same actor,
//                 [algo] name = "es"; scales out over a Collective.
//   native_learner.h  the native backend ([policy] backend = "native", the default): the
//                 trainer's forwards, update and Adam on src/native/; recurrent_learner.h
//                 the same for LSTM policies.
//   torch_*.h     LibTorch, compiled only with RLT_WITH_TORCH=ON: the torch backend
//                 (torch_learner.h: ActorCritic module torch_policy.h, PPO update
//                 torch_ppo.h) and the readers of checkpoints written before the native
//                 checkpoint format and their conversion (torch_legacy.h).
//   checkpoint.h  crash-safe checkpoint directories (policy, optimizer, normalisers,
//                 counters, RNG states, every env's state) and their loading.
//   evaluate.h    deterministic evaluation episodes (SB3 evaluate_policy).
//   inference.h   PolicyRunner: a checkpoint's policy for eval/signal (LibTorch-free
//                 header).
//
// What it is not. Not the glue that reads configs and writes run directories (train/,
// evalrun/), and not a backtester (eval/). Only learn/torch_* files and the oracle tests
// include LibTorch headers; each translation unit that does costs ~20 s to compile.
//
// Semantics are pinned to outside references: SB3's recorded minibatches and GAE, the
// PyTorch formulas for log-probabilities, entropies and clipping (torch_policy_test.cc,
// torch_ppo_test.cc).
#ifndef RLT_LEARN_LEARN_H_
#define RLT_LEARN_LEARN_H_

#include "learn/checkpoint.h"
#include "learn/es.h"
#include "learn/evaluate.h"
#include "learn/inference.h"
#include "learn/learner.h"
#include "learn/native_learner.h"
#include "learn/normalize.h"
#include "learn/policy.h"
#include "learn/ppo.h"
#include "learn/rollout.h"
#include "learn/schedule.h"
#include "learn/trainer.h"

#endif  // RLT_LEARN_LEARN_H_
