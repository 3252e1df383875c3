// rltrade native: the manual of the LibTorch-free small-policy engine.
//
// What it is. Forward, backward and Adam for the policies PPO trains, in plain C++ on
// float32 buffers allocated once, built the llm.c way: each layer's forward beside its
// backward, a plain reference beside every fast kernel, a test file beside each unit
// (gemm_test.cc, layers_test.cc, ..., one binary native_test) checking every kernel against
// its reference and every gradient against finite differences, and LibTorch autograd as the outside
// oracle (learn/native_oracle_test.cc) together with Stable-Baselines3's recorded update
// (native_sb3_golden_test.cc).
//   gemm.h          the matrix product of every layer: OpenBLAS cblas_sgemm, loop kernels
//                   for tiny products, a double-precision reference.
//   layers.h        Linear (PyTorch weight layout), tanh / relu, vectorisable exp / tanh /
//                   sigmoid; forward + backward + references.
//   actor_critic.h  learn::ActorCritic's MLP actor-critic (SB3 ActorCriticPolicy): Act,
//                   PredictValues, Evaluate + Backward; parameters named as in LibTorch.
//   ppo_loss.h      the PPO loss of learn/ppo.h and its gradient (PyTorch's conventions
//                   at the kinks of min and clamp).
//   adam.h          torch::optim::Adam and clip_grad_norm_ arithmetic.
//   lstm.h          a one-layer LSTM over (T, B, in) with episode resets, PyTorch layout.
//   recurrent_actor_critic.h  the LSTM actor-critic of recurrent PPO (sb3-contrib's
//                   RecurrentActorCriticPolicy): forward, backward and sampling.
//   gru.h           a one-layer GRU, PyTorch layout (the retrieval model's encoder).
//   tensor_file.h   a documented file of named tensors (checkpoints' policy.rlt).
//   dispatch.h      portable builds: the loop kernels' instruction set chosen at load time.
//
// What it is not. Not a tensor library (no autograd, no broadcasting, fixed shapes per
// object), not a trainer (learn/native_learner.h drives it inside learn::PpoTrainer), no
// GPU. Depends only on rlt_core and a CBLAS, so it can serve the Python module and MPI
// ranks without LibTorch.
#ifndef RLT_NATIVE_NATIVE_H_
#define RLT_NATIVE_NATIVE_H_

#include "native/actor_critic.h"
#include "native/adam.h"
#include "native/gemm.h"
#include "native/gru.h"
#include "native/layers.h"
#include "native/lstm.h"
#include "native/ppo_loss.h"
#include "native/recurrent_actor_critic.h"
#include "native/tensor_file.h"

#endif  // RLT_NATIVE_NATIVE_H_
